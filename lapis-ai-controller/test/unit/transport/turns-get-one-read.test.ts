// turns.get (and the answer of turns.wait, which is turns.get) builds its view
// from the turn its access check read, not from a second read (P-PRF-15):
// the same view as TurnService.turn, one read, and another principal's or
// application's turn still reads as not_found.
import assert from "node:assert/strict";
import { test } from "node:test";
import { TurnService } from "../../../src/domain/turn-service.ts";
import type { TurnRecord } from "../../../src/domain/turn-store-port.ts";
import type { AccessContext } from "../../../src/domain/protocol-ports.ts";
import type { ProtocolDeps } from "../../../src/transport/context.ts";
import { turnMethods } from "../../../src/transport/methods-turns.ts";
import { threadFixture } from "../../support/fixtures.ts";

const TURN = { id: "turn-1", threadId: "thread-1", commandId: "cmd-1", attemptOf: null, state: "completed", workspaceId: "ws-1", errorCode: null,
  config: { configVersion: 1, providerId: "codex" } } as unknown as TurnRecord;

function fixture() {
  let reads = 0;
  const store = { getTurn: (id: string) => { reads += 1; return id === TURN.id ? TURN : null; } };
  const service = {
    store,
    viewOf: (t: TurnRecord) => TurnService.prototype.viewOf.call(undefined as never, t),
    turn: (id: string) => TurnService.prototype.turn.call({ store, viewOf: TurnService.prototype.viewOf } as never, id),
    interactions: () => [],
    memory: () => null,
    usage: () => "unreported",
  } as unknown as TurnService;
  const deps = { store: { threads: { get: (id: string) => (id === "thread-1" ? threadFixture() : undefined) } } } as unknown as ProtocolDeps;
  return { service, deps, reads: () => reads, reset: () => { reads = 0; } };
}

const access = (principal: string, application: string): AccessContext =>
  ({ authSessionId: "s-1", principal, application, scopes: [], workspaces: null, providers: null }) as AccessContext;

test("P-PRF-15 turns.get answers the view of the turn its access check read, read once, equal to TurnService.turn", async () => {
  const f = fixture();
  const expected = f.service.turn("turn-1");
  assert.ok(expected.ok);
  f.reset();
  const get = turnMethods(f.service)["turns.get"];
  assert.ok(get !== undefined);
  const answer = await get(f.deps, {} as never, access("alice", "notes"), { turnId: "turn-1" });
  assert.equal(f.reads(), 1);
  assert.deepEqual(answer, { ok: true, value: { result: { ...expected.value, interactions: [], memory: null, usage: "unreported" } } });
});

test("P-PRF-15 another principal's or application's turn, and a missing one, still read as not_found", async () => {
  const f = fixture();
  const get = turnMethods(f.service)["turns.get"];
  assert.ok(get !== undefined);
  for (const [who, turnId] of [[access("bob", "notes"), "turn-1"], [access("alice", "mail"), "turn-1"], [access("alice", "notes"), "turn-9"]] as const) {
    const answer = await get(f.deps, {} as never, who, { turnId });
    assert.equal(answer.ok, false);
    assert.equal((answer as { error: { code: string } }).error.code, "not_found");
  }
});
