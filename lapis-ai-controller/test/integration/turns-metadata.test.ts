// Turn metadata through serve: native-mode results of four agent variants,
// policy metadata that survives restart and payload loss, payload-free error
// codes. P-ARC-01..04, P-ARC-14, P-STO-08, P-TRN-03.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

type View = { state: string; errorCode: string | null; config: { approval: Record<string, unknown>; nativeMode: { requested: string | null; result: string } | null } };
const CANARY = "CANARYsecret-9f2e7c1a";

test("turn metadata through serve", async (t) => {
  const dir = tempDir(t, "aic-meta-");
  const steps = [{ say: "x" }];
  const applied = scriptedAgent({ steps, modeIds: ["read-only", "agent"] }, "applied", dir);
  const unsupported = scriptedAgent({ steps, modeIds: ["agent", "full"] }, "unsupported", dir);
  const rejected = scriptedAgent({ steps, setMode: "reject" }, "rejected", dir);
  const unreported = scriptedAgent({ steps, modes: "absent" }, "unreported", dir);
  const crashing = scriptedAgent({ steps: [{ stderr: `boom ${CANARY}` }, { crash: 7 }] }, "crashing", dir);
  const missing = { ...applied.provider, id: "missing", launch: { command: ["/nonexistent/agent-binary"] } };
  const mode = "workspace-write";
  const serve = engineServe(t, dir, [{ ...applied.provider, mode: "agent" }, { ...unsupported.provider, mode }, { ...rejected.provider, mode }, { ...unreported.provider, mode }, crashing.provider, missing], 4);
  await serve.start();
  let c = await serve.client();
  const expect: Record<string, string> = { applied: "applied", unsupported: "unsupported", rejected: "rejected", unreported: "unreported" };
  const turns: Record<string, string> = {};
  const threads: string[] = [];
  for (const provider of Object.keys(expect)) {
    // Restricted threads request the read-only mode; allow-all is suppressed (P-ARC-01).
    const th = String((await c.createThread({ workspace: "ws-1", provider, config: { approvalPolicy: "allow-all" }, binding: { restricted: true, retention: "metadata-only" } })).threadId);
    threads.push(th);
    turns[provider] = String((await c.submitTurn(th, { text: `prompt ${CANARY}` })).turnId);
  }
  const check = async (): Promise<void> => {
    for (const [provider, result] of Object.entries(expect)) {
      const v = (await waitTurn(c, turns[provider] as string, ["completed", "failed"])) as unknown as View;
      assert.deepEqual(v.config.approval, { requested: "allow-all", effective: "ask", suppressedBy: "restricted" }, provider);
      assert.equal(v.config.nativeMode?.result ?? "none", provider === "applied" ? "applied" : "none", provider);
      const marker = readDb<{ native_mode_result: string | null; approval_effective: string }>(serve.databasePath, "SELECT native_mode_result, approval_effective FROM preparation_markers WHERE turn_id = ?", turns[provider] as string);
      if (provider === "applied") assert.deepEqual(marker.map((m) => m.native_mode_result), [result]);
      // Only the agent with a read-only mode may run a restricted turn; the others fail closed (P-PRV-19).
      assert.equal(v.state, provider === "applied" ? "completed" : "failed", provider);
    }
  };

  await t.test("P-ARC-01 P-ARC-02 P-PRV-19 restricted turns: policy suppression and native-mode results", check);

  await t.test("P-ARC-04 the metadata survives restart and payload loss, in the owner journal order", async () => {
    c.close();
    await serve.kill("SIGKILL");
    await serve.start();
    c = await serve.client();
    await check();
    const kinds = readDb<{ kind: string }>(serve.databasePath, "SELECT kind FROM journal WHERE turn_id = ? AND visibility = 'owner' ORDER BY journal_id", turns.applied as string).map((r) => r.kind);
    assert.ok(kinds.indexOf("turn_accepted") < kinds.indexOf("turn_prepared") && kinds.indexOf("turn_prepared") < kinds.indexOf("native_mode"));
  });

  await t.test("P-ARC-02 P-ARC-03 unrestricted: each variant keeps its own result; the request never reads as applied", async () => {
    for (const [provider, result] of Object.entries(expect)) {
      const th = String((await c.createThread({ workspace: "ws-2", provider })).threadId);
      await c.command("threads.configure", { threadId: th, expectedVersion: 1, config: { approvalPolicy: "ask" } });
      const turnId = String((await c.submitTurn(th, { text: "hi" })).turnId);
      const v = (await waitTurn(c, turnId, ["completed"])) as unknown as View;
      assert.equal(v.config.nativeMode?.result, result, provider);
      assert.equal(v.config.nativeMode?.requested, provider === "applied" ? "agent" : mode);
      // Only an applied result may name a current mode; the request is never shown as effective.
      if (result !== "applied") assert.notEqual((v.config.nativeMode as { current?: string | null }).current, mode);
    }
  });

  await t.test("P-TRN-03 P-STO-08 P-STO-09 failures persist only short codes; no canary in the database files", async () => {
    const th = String((await c.createThread({ workspace: "ws-3", provider: "crashing", binding: { retention: "metadata-only" } })).threadId);
    const crashed = (await waitTurn(c, String((await c.submitTurn(th, { text: `secret ${CANARY}` })).turnId), ["interrupted", "failed"])) as unknown as View;
    assert.match(String(crashed.errorCode), /^[a-z][a-z0-9_]{0,63}$/);
    const th2 = String((await c.createThread({ workspace: "ws-4", provider: "missing" })).threadId);
    const setup = (await waitTurn(c, String((await c.submitTurn(th2, { text: "x" })).turnId), ["failed"])) as unknown as View;
    assert.equal(setup.errorCode, "provider_setup_failed");
    const next = String((await c.submitTurn(String((await c.createThread({ workspace: "ws-4", provider: "applied" })).threadId), { text: "y" })).turnId);
    await waitTurn(c, next, ["completed"]);
    const codes = readDb<{ error_code: string | null }>(serve.databasePath, "SELECT error_code FROM turns WHERE error_code IS NOT NULL");
    for (const r of codes) assert.match(String(r.error_code), /^[a-z][a-z0-9_]{0,63}$/);
    c.close();
    await serve.kill("SIGTERM");
    for (const f of [serve.databasePath, `${serve.databasePath}-wal`]) {
      let bytes = "";
      try { bytes = readFileSync(f, "latin1"); } catch { continue; }
      assert.equal(bytes.includes(CANARY), false, f);
    }
  });
});
