// One acceptance world: a real homeserver (Synapse or Dendrite) with Lisa's account and human members,
// rooms made before Lisa's first start, the scripted LLM behind a router, the
// fake SearXNG, a local page server, Lisa's config file and her child process.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CANARY, type ConfigOverrides, writeTestConfig } from "../config.ts";
import { type FakeSearxng, startFakeSearxng } from "../fake-searxng.ts";
import { type ScriptedLlm, startScriptedLlm } from "../scripted-llm.ts";
import { type HomeserverKind, ROOM_VERSIONS, startHomeserver, type TestHomeserver } from "../homeserver.ts";
import { login, type MatrixTestClient, registerUser, type StartSynapseOptions } from "../synapse.ts";
import { LisaProcess } from "./lisa-process.ts";
import { LlmRouter } from "./llm-router.ts";

/** Lisa's Matrix user id in every world (the test config's `matrix.user_id`). */
export const LISA_ID = "@lisa:localhost";
/** Lisa's configured device id (the test config's `matrix.device_id`). */
export const LISA_DEVICE = "LISATEST";
/** The device of the test's own login as Lisa (joins rooms, sends "her own" messages). */
export const SETUP_DEVICE = "SETUPDEV";
/** Content key marking a message the test sent as Lisa, so the oracle can tell it from her replies. */
export const SETUP_MARK = "org.lisa.test.setup";
/** Password of the human members and the admin. */
export const HUMAN_PASSWORD = "human-password-not-secret";

/** A local web page the research journey fetches. */
export interface PageServer {
  /** URL of the article page (`http://127.0.0.1:PORT/article`). */
  readonly articleUrl: string;
  readonly title: string;
  /** Paths requested so far. */
  readonly requests: string[];
  close(): Promise<void>;
}

/** Options of `startAcceptanceWorld`. */
export interface AcceptanceWorldOptions {
  /** Names of the allowed rooms to create (Lisa joins each). */
  readonly rooms: readonly string[];
  /** Names of rooms Lisa joins that are not in her allowlist. */
  readonly outsideRooms?: readonly string[];
  /** The homeserver implementation (default Synapse). */
  readonly homeserver?: HomeserverKind;
  /** Synapse-only settings (token lifetimes). */
  readonly synapse?: StartSynapseOptions;
  readonly persona?: string;
  readonly config?: ConfigOverrides;
}

/** Everything one acceptance test file runs against. */
export interface AcceptanceWorld {
  readonly homeserver: TestHomeserver;
  readonly llm: ScriptedLlm;
  readonly router: LlmRouter;
  readonly search: FakeSearxng;
  readonly pages: PageServer;
  readonly admin: MatrixTestClient;
  readonly alice: MatrixTestClient;
  readonly bob: MatrixTestClient;
  /** Invited to every room but not joined (for membership changes). */
  readonly carol: MatrixTestClient;
  /** The test's own login as Lisa on `SETUP_DEVICE`. */
  readonly lisaSetup: MatrixTestClient;
  /** Room ids by name: allowed rooms and outside rooms. */
  readonly rooms: Readonly<Record<string, string>>;
  readonly allowedRoomIds: readonly string[];
  readonly configPath: string;
  readonly env: Readonly<Record<string, string>>;
  readonly lisa: LisaProcess;
  /** A room id by name (throws for an unknown name). */
  room(name: string): string;
  /** Sends a message as Lisa from the setup device (marked so the oracle ignores it). */
  sendAsLisa(roomId: string, body: string): Promise<string>;
  /** Stops Lisa and every server; idempotent. */
  close(): Promise<void>;
}

const ARTICLE_TITLE = "Otter Facts for Lisa";
const ARTICLE_HTML =
  `<!doctype html><html><head><meta charset="utf-8"><title>${ARTICLE_TITLE}</title></head>` +
  "<body><h1>Sea otters</h1><p>Sea otters hold hands while they sleep so they do not drift apart.</p></body></html>";

/** Serves one HTML article on an ephemeral loopback port. */
export async function startPageServer(): Promise<PageServer> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? "/");
    if (request.url === "/article") response.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE_HTML);
    else response.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    articleUrl: `http://127.0.0.1:${port}/article`,
    title: ARTICLE_TITLE,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

// Each server's default room version (12 on Synapse, whose room ids have no
// `:server` part; 10 on Dendrite), so the suite proves Lisa works with both.
async function createSharedRoom(
  alice: MatrixTestClient, roomVersion: string, name: string, members: readonly MatrixTestClient[], invited: MatrixTestClient,
): Promise<string> {
  const body = { name, preset: "private_chat", room_version: roomVersion, invite: [...members.map((m) => m.userId), invited.userId] };
  const created = await alice.request("POST", "/_matrix/client/v3/createRoom", { body });
  const roomId = created["room_id"];
  if (typeof roomId !== "string") throw new Error("createRoom returned no room_id");
  for (const member of members) await member.join(roomId);
  return roomId;
}

/** Starts the homeserver and the fakes, creates users and rooms, and writes Lisa's config (Lisa is not started). */
export async function startAcceptanceWorld(options: AcceptanceWorldOptions): Promise<AcceptanceWorld> {
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    const kind = options.homeserver ?? "synapse";
    const homeserver = await startHomeserver(kind, options.synapse ?? {});
    closers.push(() => homeserver.stop());
    const router = new LlmRouter();
    const llm = await startScriptedLlm(router.script);
    closers.push(() => llm.close());
    const search = await startFakeSearxng();
    closers.push(() => search.close());
    const pages = await startPageServer();
    closers.push(() => pages.close());

    await registerUser(homeserver, { localpart: "admin", password: HUMAN_PASSWORD, admin: true });
    await registerUser(homeserver, { localpart: "lisa", password: CANARY.matrixPassword, displayName: "Lisa" });
    for (const name of ["Alice", "Bob", "Carol"]) {
      await registerUser(homeserver, { localpart: name.toLowerCase(), password: HUMAN_PASSWORD, displayName: name });
    }
    const admin = await login(homeserver, "admin", HUMAN_PASSWORD, "ADMINDEV");
    const alice = await login(homeserver, "alice", HUMAN_PASSWORD, "ALICEDEV");
    const bob = await login(homeserver, "bob", HUMAN_PASSWORD, "BOBDEV");
    const carol = await login(homeserver, "carol", HUMAN_PASSWORD, "CAROLDEV");
    const lisaSetup = await login(homeserver, "lisa", CANARY.matrixPassword, SETUP_DEVICE);

    const rooms: Record<string, string> = {};
    for (const name of [...options.rooms, ...(options.outsideRooms ?? [])]) {
      rooms[name] = await createSharedRoom(alice, ROOM_VERSIONS[kind], name, [bob, lisaSetup], carol);
    }
    const allowedRoomIds = options.rooms.map((name) => rooms[name] ?? "");
    const overrides = options.config ?? {};
    const { path, env } = writeTestConfig({
      ...overrides,
      matrix: { homeserver_url: homeserver.url, allowed_room_ids: allowedRoomIds, sync_timeout_ms: 1_000, ...overrides.matrix },
      llm: { base_url: llm.url, ...overrides.llm },
      search: { endpoint: search.endpoint, ...overrides.search },
      // The page server is on loopback, which the web address policy refuses unless allowed.
      web: { allowed_hosts: ["127.0.0.1"], ...overrides.web },
      runtime: { shutdown_grace_seconds: 2, ...overrides.runtime },
    }, options.persona === undefined ? {} : { persona: options.persona });
    const lisa = new LisaProcess(path, env);
    closers.push(() => lisa.close());
    return {
      homeserver, llm, router, search, pages, admin, alice, bob, carol, lisaSetup, rooms, allowedRoomIds,
      configPath: path, env, lisa,
      room: (name) => {
        const id = rooms[name];
        if (id === undefined) throw new Error(`no room named ${name}`);
        return id;
      },
      sendAsLisa: (roomId, body) => lisaSetup.sendMessage(roomId, { msgtype: "m.text", body, [SETUP_MARK]: true }),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}
