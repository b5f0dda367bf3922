// Token lifecycle against a real Synapse with Lisa as a child process:
// access tokens living three seconds for over two minutes of invocations;
// expiring refresh tokens (password re-login, same device, no new baseline);
// a password change (exit 78, nothing sent) and recovery after a restart.
import assert from "node:assert/strict";
import { after, afterEach, before, describe, test } from "node:test";
import {
  type AcceptanceWorld,
  assertNoCanary,
  assertRepliesExactly,
  barrier,
  groupByTarget,
  LISA_DEVICE,
  LISA_ID,
  lisaMessages,
  pollUntil,
  startAcceptanceWorld,
  waitForReplies,
} from "../support/acceptance-world.ts";
import { CANARY } from "../support/config.ts";
import { jsonAnswer } from "../support/scripted-llm.ts";
import { resetPassword } from "../support/synapse.ts";
import { outputRead, stopAndReadOutput } from "./output.ts";

const ACCESS_TOKEN_LIFETIME_MS = 3_000;
// Shorter than the access token: every refresh Lisa tries is refused, so she logs in again.
const REFRESH_TOKEN_LIFETIME_MS = 1_000;
const LOAD_DURATION_MS = 125_000;
const LOAD_INTERVAL_MS = 2_000;
const CHANGED_PASSWORD = "a-new-password-lisa-does-not-know";

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Lisa's device ids (the admin registration made one before any test login). */
async function lisaDevices(world: AcceptanceWorld): Promise<string[]> {
  const body = await world.admin.request("GET", `/_synapse/admin/v2/users/${encodeURIComponent(LISA_ID)}/devices`);
  const devices = Array.isArray(body["devices"]) ? (body["devices"] as Record<string, unknown>[]) : [];
  return devices.map((device) => String(device["device_id"])).sort();
}

/** Password logins of a run, the first included (`matrix_reauthenticated` reports only the later ones). */
function passwordLogins(world: AcceptanceWorld, run = world.lisa.current): number {
  // The Matrix client logs each login (component matrix); the service adds one line for its startup login.
  const logins = world.lisa.logLines(run).filter((line) => line.event === "matrix_logged_in" && line["component"] === "matrix").length;
  const renewals = world.lisa.logLines(run).filter((line) => line.event === "matrix_reauthenticated" && line["kind"] === "password_login").length;
  assert.equal(renewals, Math.max(0, logins - 1), "every password login after the first is reported as a renewal");
  return logins;
}

/** Result of the long run with short-lived access tokens. */
interface LoadResult {
  readonly sent: Map<string, string[]>;
  readonly durationMs: number;
}

// Mentions every LOAD_INTERVAL_MS, alternating rooms and senders, for LOAD_DURATION_MS.
async function steadyLoad(world: AcceptanceWorld, roomNames: readonly string[]): Promise<LoadResult> {
  const started = Date.now();
  const sent = new Map<string, string[]>(roomNames.map((name) => [world.room(name), []]));
  for (let i = 0; Date.now() - started < LOAD_DURATION_MS; i += 1) {
    const roomId = world.room(roomNames[i % roomNames.length]!);
    const sender = i % 2 === 0 ? world.alice : world.bob;
    sent.get(roomId)!.push(await sender.sendMention(roomId, LISA_ID, "Lisa", `steady question ${i + 1}`));
    await sleep(LOAD_INTERVAL_MS);
  }
  return { sent, durationMs: Date.now() - started };
}

describe("token lifecycle (real Synapse, child process)", () => {
  let steady: AcceptanceWorld;
  let expiring: AcceptanceWorld;
  let load: Promise<LoadResult | Error>;
  // Devices that existed before Lisa's first start (registration, setup logins).
  const preexisting = new Map<AcceptanceWorld, string[]>();
  const newDevices = async (world: AcceptanceWorld): Promise<string[]> =>
    (await lisaDevices(world)).filter((id) => !(preexisting.get(world) ?? []).includes(id));
  let releaseSlow: () => void = () => undefined;
  const slowReleased = new Promise<void>((resolve) => {
    releaseSlow = resolve;
  });

  before(async () => {
    steady = await startAcceptanceWorld({ rooms: ["steady-1", "steady-2"], synapse: { accessTokenLifetimeMs: ACCESS_TOKEN_LIFETIME_MS } });
    expiring = await startAcceptanceWorld({
      rooms: ["expiring"],
      synapse: { accessTokenLifetimeMs: ACCESS_TOKEN_LIFETIME_MS, refreshTokenLifetimeMs: REFRESH_TOKEN_LIFETIME_MS },
    });
    await expiring.lisaSetup.logout();
    // The answer to "[slow]" waits (bounded) until the test has changed Lisa's password.
    expiring.router.on("[slow]", async () => {
      await Promise.race([slowReleased, sleep(30_000)]);
      return jsonAnswer("Indeed, sorry for the wait.");
    });
    for (const world of [steady, expiring]) preexisting.set(world, await lisaDevices(world));
    steady.lisa.start();
    expiring.lisa.start();
    await Promise.all([steady.lisa.waitForLog("sync_baseline"), expiring.lisa.waitForLog("sync_baseline")]);
    // The long steady run proceeds while the expiring-refresh scenarios run against the other homeserver.
    load = steadyLoad(steady, ["steady-1", "steady-2"]).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
  });

  afterEach(async () => {
    await assertNoCanary(steady);
    await assertNoCanary(expiring);
  });

  after(async () => {
    await Promise.allSettled([steady?.close(), expiring?.close()]);
  });

  test("with refresh tokens expiring too, Lisa logs in again with the same device and keeps her sync position", async () => {
    const room = expiring.room("expiring");
    const run = expiring.lisa.current!;
    const ids: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      ids.push(await expiring.alice.sendMention(room, LISA_ID, "Lisa", `question ${i + 1} across re-logins`));
      await waitForReplies(expiring, room, [ids.at(-1)!]);
      await sleep(1_500);
    }
    await expiring.lisa.waitForLog("matrix_refresh_rejected", { count: 2 });
    const barrierId = await barrier(expiring, room);
    await assertRepliesExactly(expiring, room, [...ids, barrierId]);
    assert.ok(passwordLogins(expiring, run) >= 3, `re-logged in with the password (${passwordLogins(expiring, run)} logins)`);
    assert.deepEqual(await newDevices(expiring), [LISA_DEVICE], "every login reused the configured device");
    assert.equal(expiring.lisa.count("sync_baseline"), 1, "no new baseline after re-login");
    assert.equal(run.exit, null, "still running");
  });

  test("after a password change Lisa exits 78 without sending anything; restored and restarted, she answers what is pending once", async () => {
    const room = expiring.room("expiring");
    const answeredBefore = [...groupByTarget(await lisaMessages(expiring, room)).keys()];
    const slow = await expiring.alice.sendMention(room, LISA_ID, "Lisa", "[slow] a question that takes a while");
    await pollUntil(() => expiring.router.requestsFor("[slow]").length > 0, 60_000, () => "the slow invocation reaching the LLM");
    await resetPassword(expiring.admin, LISA_ID, CHANGED_PASSWORD, { logoutDevices: true });
    releaseSlow();
    const exit = await expiring.lisa.current!.exited;
    // The exit can be seen before the run's last log lines have been read from its pipe.
    await outputRead(expiring);
    assert.deepEqual(exit, { code: 78, signal: null }, `exit status 78\n${expiring.lisa.tail()}`);
    assert.ok(expiring.lisa.count("matrix_auth_failed_permanently") >= 1);
    const whileDown = await expiring.bob.sendMention(room, LISA_ID, "Lisa", "are you there after the password change?");
    assert.equal((await lisaMessages(expiring, room)).length, answeredBefore.length, "nothing was sent after the password change");

    await resetPassword(expiring.admin, LISA_ID, CANARY.matrixPassword, { logoutDevices: false });
    expiring.lisa.start();
    await waitForReplies(expiring, room, [slow, whileDown]);
    const barrierId = await barrier(expiring, room);
    await assertRepliesExactly(expiring, room, [...answeredBefore, slow, whileDown, barrierId]);
    assert.equal(expiring.lisa.count("sync_baseline"), 1, "the restart kept the sync position");
    assert.deepEqual(await lisaDevices(expiring), [LISA_DEVICE], "the reset removed every device; Lisa's login made the configured one again");
  });

  test("with access tokens living three seconds, Lisa answers every invocation exactly once for over two minutes", async () => {
    const result = await load;
    if (result instanceof Error) throw result;
    assert.ok(result.durationMs >= 120_000, `ran for ${result.durationMs} ms`);
    let total = 0;
    for (const [roomId, ids] of result.sent) {
      await waitForReplies(steady, roomId, ids);
      const barrierId = await barrier(steady, roomId);
      await assertRepliesExactly(steady, roomId, [...ids, barrierId]);
      total += ids.length;
    }
    const refreshes = steady.lisa.count("matrix_token_refreshed");
    console.log(`tokens: invocations=${total} refreshes=${refreshes} password_logins=${passwordLogins(steady)} duration_ms=${result.durationMs}`);
    assert.ok(refreshes >= 30, `many refreshes (${refreshes})`);
    assert.equal(passwordLogins(steady), 1, "refreshes alone kept the session");
    assert.deepEqual(await newDevices(steady), [LISA_DEVICE], "every login used the configured device");
    assert.equal(steady.lisa.current?.exit, null, "still running");
  });

  test("no canary secret appears in Lisa's output or any room message", async () => {
    assert.deepEqual(await stopAndReadOutput(steady), { code: 0, signal: null });
    assert.deepEqual(await stopAndReadOutput(expiring), { code: 0, signal: null });
    await assertNoCanary(steady);
    await assertNoCanary(expiring);
  });
});
