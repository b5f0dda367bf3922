// In-process protocol layer over a real SQLite store and a real ws server on
// 127.0.0.1, for integration tests that need a test clock, a comparator spy
// or a fake TurnPort (the fake is a stand-in for the issue-14 engine only).
import { join } from "node:path";
import type { TestContext } from "node:test";
import type { BootstrapCredential } from "../../src/auth/auth-sessions.ts";
import { makeCredential } from "../../src/auth/bootstrap.ts";
import type { DigestComparator } from "../../src/auth/credentials.ts";
import type { Clock } from "../../src/domain/ports.ts";
import type { TurnPort } from "../../src/domain/protocol-ports.ts";
import { authSessionStore } from "../../src/persistence/auth-store.ts";
import type { SqliteStore } from "../../src/persistence/sqlite-store.ts";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { transportLimits } from "../../src/transport/options.ts";
import type { RunningProtocol } from "../../src/transport/protocol.ts";
import { startProtocol } from "../../src/transport/protocol.ts";
import { tempDir } from "./temp.ts";

/** A controllable clock. */
export class TestClock implements Clock {
  value = 1_700_000_000_000;
  now(): number {
    return this.value;
  }
}

/** Tokens used by the harness credentials. */
export const TOKENS = {
  owner: "owner-token-0123456789abcdef",
  appA: "app-a-token-0123456789abcdef",
  appB: "app-b-token-0123456789abcdef",
  principalB: "principal-b-token-0123456789",
  readOnly: "read-only-token-0123456789ab",
} as const;

/** The default credentials: an owner, two apps of one principal, a second principal, a read-only session. */
export function defaultCredentials(): BootstrapCredential[] {
  return [
    makeCredential("owner", TOKENS.owner, {}),
    makeCredential("app-a", TOKENS.appA, { principal: "alice", application: "notes" }),
    makeCredential("app-b", TOKENS.appB, { principal: "alice", application: "chat" }),
    makeCredential("principal-b", TOKENS.principalB, { principal: "bob", application: "notes" }),
    makeCredential("read-only", TOKENS.readOnly, { principal: "alice", application: "notes", scopes: ["threads:read"] }),
  ];
}

/** A running in-process protocol layer. */
export interface Harness {
  readonly url: string;
  readonly store: SqliteStore;
  readonly protocol: RunningProtocol;
  readonly clock: TestClock;
  readonly logs: string[];
}

/** Starts the protocol layer on an ephemeral port; everything stops after the test. */
export async function startHarness(
  t: TestContext,
  options: { turns?: TurnPort; compare?: DigestComparator; limits?: Record<string, unknown>; credentials?: BootstrapCredential[]; volatile?: Record<string, number> } = {},
): Promise<Harness> {
  const dir = tempDir(t, "aic-proto-");
  const clock = new TestClock();
  const opened = openSqliteStore({ path: join(dir, "controller.sqlite"), clock, ...(options.volatile === undefined ? {} : { volatile: options.volatile }) });
  if (!opened.ok) throw new Error(opened.error.code);
  const store = opened.value;
  const limits = transportLimits({ port: 0, ...options.limits });
  if (!limits.ok) throw new Error(limits.error.code);
  const logs: string[] = [];
  const started = await startProtocol({
    store,
    authStore: authSessionStore(store.handle),
    credentials: options.credentials ?? defaultCredentials(),
    limits: limits.value,
    clock,
    log: (event, fields) => logs.push(JSON.stringify({ event, ...fields })),
    turns: options.turns ?? null,
    ...(options.compare === undefined ? {} : { compare: options.compare }),
  });
  if (!started.ok) throw new Error(started.error.code);
  const protocol = started.value;
  t.after(async () => {
    await protocol.close();
    store.close();
  });
  return { url: protocol.server.url, store, protocol, clock, logs };
}
