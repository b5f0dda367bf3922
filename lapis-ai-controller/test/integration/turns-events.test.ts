// The turn's event stream as an SDK consumer sees it, and a turn through serve
// under Deno. P-PRV-03, P-PRV-05, P-PRV-06, P-CAP-06/07, P-ARC-05, P-ARC-14.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ThreadEventDelivery } from "../../src/client.ts";
import { EVENT_KINDS, type EventKind } from "../../src/domain/contract/events.ts";
import { validate } from "../../src/domain/contract/validate.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import { engineServe, readDb, waitTurn } from "../support/engine-serve.ts";
import { tempDir } from "../support/temp.ts";

const STEPS = [
  { think: "pondering", messageId: "r1" },
  { say: "a", messageId: "m1" }, { say: "b", messageId: "m1" }, { say: "c", messageId: "m2" },
  { tool: { id: "tc1", title: "Run", kind: "execute", rawInput: { command: "echo hi" } } },
  { toolUpdate: { id: "tc1", status: "in_progress", locations: [{ path: "/w/a.txt" }] } },
  { toolUpdate: { id: "tc1", status: "completed" } },
];

for (const runtime of ["node", "deno"] as const) {
  test(`P-PRV-03 P-PRV-06 P-CAP-06 P-PRV-05 P-PRF-05 the SDK event stream of one turn (serve under ${runtime})`, async (t) => {
    const dir = tempDir(t, `aic-events-${runtime}-`);
    const agent = scriptedAgent({ steps: STEPS }, "scripted", dir);
    const serve = engineServe(t, dir, [{ ...agent.provider, vcsIdentity: { name: "Ann Example", email: "ann@example.org" } }], 1, {}, runtime);
    await serve.start();
    const c = await serve.client();
    const threadId = String((await c.createThread({ workspace: "ws-1", provider: "scripted", config: { approvalPolicy: "allow-all" } })).threadId);
    const got: ThreadEventDelivery[] = [];
    await c.subscribe(threadId, { event: (d) => got.push(d) });
    const turnId = String((await c.submitTurn(threadId, { text: "hi" })).turnId);
    await waitTurn(c, turnId, ["completed"]);
    const end = Date.now() + 5_000;
    // turn_outcome is the turn's last transcript event (issue 25: turns.wait wakes on it).
    while (!got.some((d) => d.event.kind === "turn_outcome") && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const kinds = got.map((d) => `${String(d.event.kind)}:${String(d.event.messageId ?? "")}`);
    // Streamed text (issue 27): each block keeps its order, but a block's tail that a detector could
    // still extend ("pondering" ends in "g", which could start "gh…") is released later, so reasoning
    // pieces may fall after the other channel's text; everything else keeps its place.
    // Pieces of one block that arrive before the next group commit are one event (P-PRF-05); whether "a" and "b"
    // share a read is up to the pipes, so consecutive pieces of one block count as one here (their text is checked below).
    const ordered = kinds.filter((k) => !k.startsWith("thread_") && !k.startsWith("reasoning:"));
    assert.deepEqual(ordered.filter((k, i) => !(k.startsWith("text:") && ordered[i - 1] === k)), [
      "user_prompt:", "text:m1", "message_completed:m1", "text:m2", "tool_begin:", "tool_end:", "message_completed:m2", "message_completed:r1", "turn_outcome:",
    ]);
    assert.ok(kinds.indexOf("reasoning:r1") < kinds.indexOf("text:m1"), "the reasoning streams first");
    assert.ok(kinds.lastIndexOf("reasoning:r1") < kinds.indexOf("message_completed:r1"), "all reasoning precedes its completion");
    const thought = got.filter((d) => d.event.kind === "reasoning").map((d) => (d.event.payload as { text: string }).text).join("");
    assert.equal(thought, "pondering");
    assert.deepEqual(got.at(-1)?.event.metadata, { state: "completed", errorCode: null });
    // Every delivered event has the metadata and payload its kind's contract gives (docs/protocol.md, generated).
    for (const d of got) {
      const kind = EVENT_KINDS[d.event.kind as EventKind];
      assert.ok(kind, d.event.kind);
      assert.equal(validate(kind.metadata, d.event.metadata), null, `${d.event.kind} metadata`);
      assert.equal("payload" in kind ? validate(kind.payload, d.event.payload) : (d.event.payload === undefined ? null : "payload"), null, `${d.event.kind} payload`);
    }
    const text = got.filter((d) => d.event.kind === "text").map((d) => (d.event.payload as { text: string }).text).join("");
    assert.equal(text, "abc", "reasoning never enters the authored reply");
    for (let i = 1; i < got.length; i++) assert.equal(got[i]?.seq, (got[i - 1]?.seq ?? 0) + 1, "contiguous frame sequence, independent of message ids");
    const end2 = got.find((d) => d.event.kind === "tool_end")?.event as unknown as { metadata: Record<string, unknown>; payload: { envelope: unknown } };
    assert.equal(end2.metadata.settled, true);
    assert.deepEqual(end2.payload.envelope, { toolCallId: "tc1", title: "Run", kind: "execute", status: "completed", locations: ["/w/a.txt"], command: "echo hi" });
    // Policy metadata is owner-only: nothing of it reached the consumer (P-ARC-05).
    assert.ok(got.every((d) => !["turn_prepared", "native_mode", "turn_accepted", "turn_state"].includes(String(d.event.kind))));
    // Everything the consumer saw is already durable (P-ARC-14).
    assert.ok(readDb<{ n: number }>(serve.databasePath, "SELECT count(*) AS n FROM journal WHERE thread_id = ? AND seq IS NOT NULL", threadId)[0]!.n >= got.length);
    const spawn = agent.log().find((e) => e.event === "spawn") as unknown as { git: Record<string, string> };
    assert.equal(spawn.git.GIT_AUTHOR_EMAIL, "ann@example.org");
    assert.equal(spawn.git.GIT_COMMITTER_NAME, "Ann Example");
    c.close();
    // Stop serve before the temp dir goes, so nothing is still writing into it.
    await serve.kill("SIGTERM");
  });
}
