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
import { TurnService, type TurnLimits } from "../../src/domain/turn-service.ts";
import type { TurnState } from "../../src/domain/turn-state.ts";
import { tempForProcess } from "./scripted-agent-fixture.ts";

/** One engine instance over a database path. */
export type EngineFixture = { dir: string; dbPath: string; sqlite: SqliteStore; store: EngineStore; executor: AcpExecutor; service: TurnService; workspaces: Map<string, string>; close(): Promise<void> };

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
export function startEngine(providers: AcpProviderConfig[], opts: { dir?: string; limits?: Partial<TurnLimits>; workspaces?: number } = {}): EngineFixture {
  const dir = opts.dir ?? tempForProcess("ctl-engine-");
  const dbPath = join(dir, "controller.db");
  const sqlite = openStore(dbPath);
  const store = engineStore(sqlite);
  const workspaces = makeWorkspaces(dir, opts.workspaces ?? 2);
  const executor = new AcpExecutor({ providers, host: currentLaunchHost(), env: process.env, tmpRoot: dir });
  const service = new TurnService({ store, executor, workspaces, limits: opts.limits ?? {}, newId: () => randomUUID() });
  service.start();
  return {
    dir, dbPath, sqlite, store, executor, service, workspaces,
    async close() { await service.close(); sqlite.close(); },
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
