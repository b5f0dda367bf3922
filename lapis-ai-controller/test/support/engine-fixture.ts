// A turn service over a real SQLite file and a real AcpExecutor driving the
// scripted ACP agent (the fault-injection stand-in).
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { AcpExecutor, type AcpProviderConfig } from "../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../src/execution/acp-launch.ts";
import { engineStore } from "../../src/persistence/engine-store.ts";
import { openSqliteStore, type SqliteStore } from "../../src/persistence/sqlite-store.ts";
import type { EngineStore } from "../../src/domain/turn-store-port.ts";
import type { Accepted, Actor } from "../../src/domain/commands.ts";
import type { Result } from "../../src/domain/errors.ts";
import { ThreadEventHub } from "../../src/domain/event-hub.ts";
import type { TurnPort } from "../../src/domain/protocol-ports.ts";
import type { Json } from "../../src/domain/records.ts";
import { createThread, type BindingInput, type ThreadCommandDeps, type ThreadConfigInput } from "../../src/domain/thread-commands.ts";
import { ThreadReservations } from "../../src/domain/thread-reservations.ts";
import { submitTurn } from "../../src/domain/turn-commands.ts";
import { engineTurnPort } from "../../src/domain/turn-port.ts";
import { TurnService, type TurnLimits } from "../../src/domain/turn-service.ts";
import type { TurnState } from "../../src/domain/turn-state.ts";
import { tempForProcess } from "./scripted-agent-fixture.ts";

/** The principal and application the fixture's commands run as. */
export const ACTOR: Actor = { principal: "p1", application: "app" };

/** What a test thread is created with (the protocol's threads.create, without the frame). */
export type ThreadSpec = { workspace?: string; provider?: string; config?: ThreadConfigInput; binding?: BindingInput };

/** One engine instance over a database path. */
export type EngineFixture = {
  dir: string; dbPath: string; sqlite: SqliteStore; store: EngineStore; executor: AcpExecutor; service: TurnService; workspaces: Map<string, string>;
  /** The production thread-command deps over this store (what the protocol passes). */
  threadDeps: ThreadCommandDeps;
  /** The production TurnPort over the service. */
  port: TurnPort;
  /** threads.create through domain/thread-commands.ts; the new thread id. */
  createThread(spec?: ThreadSpec, actor?: Actor): string;
  /** turns.submit through domain/turn-commands.ts, running its after-commit step as the protocol does. */
  submit(threadId: string, commandId: string, input: Json, actor?: Actor): Result<Accepted>;
  close(): Promise<void>;
};

/** Opens the real store (instance lock, WAL + FULL, schema v1, startup validation). */
export function openStore(path: string): SqliteStore {
  const r = openSqliteStore({ path });
  if (!r.ok) throw new Error(r.error.code);
  return r.value;
}

/** Creates workspace directories ws-1..ws-n under dir. */
export function makeWorkspaces(dir: string, n: number): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 1; i <= n; i++) {
    const p = join(dir, `ws-${i}`);
    mkdirSync(p, { recursive: true });
    m.set(`ws-${i}`, realpathSync(p));
  }
  return m;
}

/** Starts an engine over `dir` (reused across restarts). */
export function startEngine(providers: AcpProviderConfig[], opts: { dir?: string; limits?: Partial<TurnLimits>; workspaces?: number; providerMode?: (id: string) => string | null } = {}): EngineFixture {
  const dir = opts.dir ?? tempForProcess("ctl-engine-");
  const dbPath = join(dir, "controller.db");
  const sqlite = openStore(dbPath);
  const store = engineStore(sqlite);
  const workspaces = makeWorkspaces(dir, opts.workspaces ?? 2);
  const executor = new AcpExecutor({ providers, host: currentLaunchHost(), env: process.env, tmpRoot: dir });
  const service = new TurnService({ store, executor, workspaces, limits: opts.limits ?? {}, newId: () => randomUUID(), ...(opts.providerMode ? { providerMode: opts.providerMode } : {}) });
  service.start();
  return {
    dir, dbPath, sqlite, store, executor, service, workspaces, ...productionCommands(sqlite, service),
    async close() { await service.close(); sqlite.close(); },
  };
}

/** The protocol's thread and submit commands over a store and service, without the frames. */
export function productionCommands(sqlite: SqliteStore, service: TurnService): Pick<EngineFixture, "threadDeps" | "port" | "createThread" | "submit"> {
  const port = engineTurnPort(service);
  const threadDeps: ThreadCommandDeps = {
    store: sqlite, clock: { now: () => Date.now() }, newId: randomUUID, reservations: new ThreadReservations(16, 60_000),
    hub: new ThreadEventHub(), isBusy: (id) => port.isBusy(id), defaultRetention: sqlite.retention,
  };
  return {
    threadDeps, port,
    createThread(spec = {}, actor = ACTOR) {
      const r = createThread(threadDeps, actor, { commandId: `create-${randomUUID()}`, workspaceId: spec.workspace ?? "ws-1", provider: spec.provider ?? "scripted", config: spec.config, binding: spec.binding });
      if (!r.ok) throw new Error(r.error.code);
      r.value.after?.();
      return String(r.value.record.receipt.threadId);
    },
    submit(threadId, commandId, input, actor = ACTOR) {
      const thread = sqlite.threads.get(threadId);
      if (thread === undefined) throw new Error("unknown thread");
      const r = submitTurn(threadDeps, port, actor, thread, { commandId, input });
      if (r.ok) r.value.after?.();
      return r;
    },
  };
}

/** Polls until `fn` is true or the deadline passes. */
export async function waitFor(fn: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits for a turn to reach one of the states. */
export async function waitState(f: EngineFixture, turnId: string, states: TurnState[], timeoutMs = 10_000): Promise<TurnState> {
  let last: TurnState | undefined;
  await waitFor(() => { last = f.store.getTurn(turnId)?.state; return last !== undefined && states.includes(last); }, `turn ${turnId} in ${states.join("|")} (last ${String(last)})`, timeoutMs);
  return last as TurnState;
}
