// File-change approvals on the native path, against the real app-server:
// Codex asks before a patch outside the writable roots, offering all four of
// its decisions, and each one has its own effect on disk and on the turn.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { addFile, dispatch, nativeFixture, prepared, textOf } from "../support/codex-native-fixture.ts";

test("P-TRN-09 P-TRN-10 native file-change approvals: accept, acceptForSession, decline and cancel, each checked on disk", { timeout: 240_000 }, async (t) => {
  const f = await nativeFixture(t, { strictTmp: true });
  const s = await prepared(f.executor(), f.setup());
  const outside = (name: string) => join(f.dir, name);

  f.model.push(addFile(outside("accepted.txt"), "one"), { text: ["patched"] });
  const accepted = dispatch(s, "add a file", async () => ({ outcome: "selected", optionId: "accept" }));
  assert.deepEqual(await accepted.outcome, { kind: "stopped", stopReason: "end_turn" });
  const ask = accepted.rec.asks[0];
  assert.ok(ask);
  assert.deepEqual(ask.options.map((o) => o.optionId), ["accept", "acceptForSession", "decline", "cancel"]);
  assert.equal(ask.toolKind, "edit");
  assert.equal(readFileSync(outside("accepted.txt"), "utf8"), "one\n");
  const edit = accepted.rec.events.find((e) => e.type === "tool_end");
  assert.ok(edit?.type === "tool_end" && edit.envelope.kind === "edit" && edit.envelope.locations.includes(outside("accepted.txt")));

  f.model.push(addFile(outside("declined.txt"), "two"), { text: ["left alone"] });
  const declined = dispatch(s, "add another", async () => ({ outcome: "selected", optionId: "decline" }));
  // `decline` refuses the change and the turn goes on: the model is asked again and answers.
  assert.deepEqual(await declined.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(existsSync(outside("declined.txt")), false);
  assert.equal(textOf(declined.rec.events), "left alone");

  f.model.push(addFile(outside("cancelled.txt"), "three"));
  const cancelled = dispatch(s, "and another", async () => ({ outcome: "selected", optionId: "cancel" }));
  // `cancel` refuses it and ends the turn.
  assert.deepEqual(await cancelled.outcome, { kind: "stopped", stopReason: "cancelled" });
  assert.equal(existsSync(outside("cancelled.txt")), false);

  f.model.push(addFile(outside("session-1.txt"), "four"), { text: ["first"] });
  const forSession = dispatch(s, "add with a lasting yes", async () => ({ outcome: "selected", optionId: "acceptForSession" }));
  assert.deepEqual(await forSession.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(readFileSync(outside("session-1.txt"), "utf8"), "four\n");
  // The same file again in this session: Codex remembers the approval and does not ask.
  f.model.push({ call: { name: "exec_command", arguments: { cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: ${outside("session-1.txt")}\n@@\n-four\n+five\n*** End Patch\nEOF` } } }, { text: ["second"] });
  const again = dispatch(s, "change it", async () => ({ outcome: "selected", optionId: "decline" }));
  assert.deepEqual(await again.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(again.rec.asks.length, 0, "accepted for the session: not asked again");
  assert.equal(readFileSync(outside("session-1.txt"), "utf8"), "five\n");
});
