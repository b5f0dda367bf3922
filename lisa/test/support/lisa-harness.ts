// Runs Lisa against the fake homeserver, the scripted LLM and the fake
// SearXNG: in process (runService) or as a child process (`lisa run`).
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { runService } from "../../src/app/service.ts";
import type { AppConfig } from "../../src/config/types.ts";
import { createLogger } from "../../src/log/logger.ts";
import { openStateStore } from "../../src/state/store.ts";
import type { StateStore } from "../../src/state/types.ts";
import { CANARY, writeTestConfig, type ConfigOverrides } from "./config.ts";
import { startFakeHomeserver, type FakeHomeserver } from "./fake-homeserver.ts";
import type { HomeserverProfile } from "./fake-homeserver/types.ts";
import { startFakeSearxng, type FakeSearxng } from "./fake-searxng.ts";
import { jsonAnswer, startScriptedLlm, type Script, type ScriptedLlm } from "./scripted-llm.ts";

/** Lisa's test identity. */
export const LISA = "@lisa:localhost";
/** Human members of every room. */
export const ALICE = "@alice:localhost";
export const BOB = "@bob:localhost";
export const CAROL = "@carol:localhost";
/** Allowed rooms. */
export const ROOM1 = "!room1:localhost";
export const ROOM2 = "!room2:localhost";
export const ROOM3 = "!room3:localhost";
/** A room Lisa is in but may not operate in. */
export const OUTSIDE = "!outside:localhost";

/** The repository root. */
export const REPO = join(import.meta.dirname, "../..");

/** Default LLM behaviour: a short JSON answer that names the request number. */
export const echoScript: Script = (_request, index) => jsonAnswer(`Indeed, answer number ${index + 1}.`);

/** Everything one test scenario runs against. */
export interface World {
  readonly hs: FakeHomeserver;
  readonly llm: ScriptedLlm;
  readonly search: FakeSearxng;
  readonly config: AppConfig;
  readonly configPath: string;
  readonly env: Record<string, string>;
  readonly dir: string;
  /** Captured log lines of in-process runs. */
  readonly logs: string[];
  close(): Promise<void>;
}

/** Options of a scenario world. */
export interface WorldOptions {
  readonly profile?: HomeserverProfile;
  readonly llmScript?: Script;
  readonly config?: ConfigOverrides;
  readonly rooms?: readonly string[];
  readonly homeserver?: {
    readonly accessTokenLifetimeMs?: number; readonly refreshTokenLifetimeMs?: number | null;
    readonly messageRateLimit?: { readonly perSecond: number; readonly burstCount: number };
  };
}

/** Starts the fakes, creates users and rooms (Lisa joined everywhere) and writes Lisa's config. */
export async function createWorld(options: WorldOptions = {}): Promise<World> {
  const hs = await startFakeHomeserver({ profile: options.profile ?? "synapse", ...options.homeserver });
  const llm = await startScriptedLlm(options.llmScript ?? echoScript);
  const search = await startFakeSearxng();
  hs.addUser(LISA, CANARY.matrixPassword);
  for (const user of [ALICE, BOB, CAROL]) hs.addUser(user, `${user}-password`);
  const rooms = options.rooms ?? [ROOM1, ROOM2, ROOM3];
  const members = [
    { userId: LISA, displayName: "Lisa" }, { userId: ALICE, displayName: "Alice" },
    { userId: BOB, displayName: "Bob" }, { userId: CAROL, displayName: "Carol" },
  ];
  for (const room of [...rooms, OUTSIDE]) hs.createRoom(room, members);
  const overrides = options.config ?? {};
  const { dir, path, env, config } = writeTestConfig({
    ...overrides,
    matrix: { homeserver_url: hs.url, allowed_room_ids: [...rooms], ...overrides.matrix },
    llm: { base_url: llm.url, ...overrides.llm },
    search: { endpoint: search.endpoint, ...overrides.search },
    runtime: { shutdown_grace_seconds: 2, ...overrides.runtime },
  });
  const logs: string[] = [];
  return {
    hs, llm, search, config, configPath: path, env, dir, logs,
    close: async () => {
      await Promise.allSettled([hs.close(), llm.close(), search.close()]);
    },
  };
}

/** A Lisa service running inside the test process. */
export interface InProcessLisa {
  readonly store: StateStore;
  /** Resolves to the exit status once the service has stopped. */
  readonly done: Promise<number>;
  /** SIGTERM-like graceful stop; resolves to the exit status. */
  stop(): Promise<number>;
}

/** Runs `runService` in process with captured, secret-scrubbed logs. */
export function startInProcess(world: World): InProcessLisa {
  const opened = openStateStore(world.config.runtime.database_path, { mode: "run" });
  if (!opened.ok) throw opened.error;
  const store = opened.value;
  const log = createLogger({
    level: "DEBUG",
    secrets: world.config.secrets.map((s) => s.reveal()),
    destination: { write: (line: string) => void world.logs.push(line) },
  });
  const shutdown = new AbortController();
  const done = runService({ config: world.config, store, log, shutdown: shutdown.signal }).finally(() => store.close());
  return {
    store,
    done,
    stop: async () => {
      shutdown.abort(new Error("test stop"));
      return done;
    },
  };
}

/** A Lisa service running as `node src/main.ts run --config F`. */
export interface ChildLisa {
  readonly child: ChildProcess;
  readonly output: { stdout: string; stderr: string };
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `lisa run` as a child process with the world's environment (Node 24 from node_modules). */
export function startChild(world: World, args: readonly string[] = []): ChildLisa {
  const child = spawn(join(REPO, "node_modules/.bin/node"), [join(REPO, "src/main.ts"), "run", "--config", world.configPath, ...args], {
    cwd: REPO,
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", ...world.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => (output.stdout += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (output.stderr += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  return { child, output, exited };
}

/** Lisa's messages in a room, oldest first. */
export function lisaReplies(world: World, roomId: string): ReturnType<FakeHomeserver["eventsBy"]> {
  return world.hs.eventsBy(LISA, roomId).filter((e) => e.type === "m.room.message");
}

/** The event id Lisa's message replies to (`m.in_reply_to`), or null. */
export function repliedTo(event: { readonly content: Readonly<Record<string, unknown>> }): string | null {
  const relates = event.content["m.relates_to"] as Record<string, unknown> | undefined;
  const inReplyTo = relates?.["m.in_reply_to"] as Record<string, unknown> | undefined;
  return typeof inReplyTo?.["event_id"] === "string" ? inReplyTo["event_id"] : null;
}

/** Polls `predicate` every 20 ms until it holds; rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until Lisa has completed her first sync (baseline committed). */
export async function waitForBaseline(store: Pick<StateStore, "syncState">, timeoutMs = 10_000): Promise<void> {
  await until(() => store.syncState().initialized, timeoutMs, "baseline sync");
}
