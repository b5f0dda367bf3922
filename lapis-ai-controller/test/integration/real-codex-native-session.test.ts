// Native session bindings against the real app-server: a restricted session
// is one-shot, read-only sandboxed, in an isolated cwd removed with it, and
// never granted tools; the vcsIdentity is in the app-server's environment,
// and a changed identity replaces the native thread.
import assert from "node:assert/strict";
import { existsSync, readlinkSync } from "node:fs";
import { test } from "node:test";
import { sessionBindingKey } from "../../src/execution/acp-executor.ts";
import { dispatch, nativeFixture, prepared, textOf } from "../support/codex-native-fixture.ts";
import { descendants, procText } from "../support/proc-tree.ts";

/** The working directory of a live process, or "" once it is gone. */
function cwdOf(pid: number): string {
  try { return readlinkSync(`/proc/${pid}/cwd`); } catch { return ""; }
}

const appServers = () => descendants(process.pid).filter((pid) => procText(pid, "cmdline").includes("app-server"));

test("P-PRV-19 native restricted sessions: read-only sandbox applied, isolated cwd removed after the one turn, no tools granted", { timeout: 120_000 }, async (t) => {
  const f = await nativeFixture(t);
  let granted = 0;
  const ex = f.executor(() => { granted += 1; return null; });
  const s = await prepared(ex, f.setup({ restricted: true, sessionKey: "t9:codex-native" }));
  assert.deepEqual(s.nativeMode, { requested: "read-only", result: "applied", current: "read-only" });
  const cwds = appServers().map(cwdOf);
  assert.ok(cwds.some((c) => c.includes("restricted-")), "the app-server runs in an isolated cwd");
  f.model.push({ text: ["restricted answer"] });
  const turn = dispatch(s, "look only");
  assert.deepEqual(await turn.outcome, { kind: "stopped", stopReason: "end_turn" });
  assert.equal(textOf(turn.rec.events), "restricted answer");
  assert.equal(granted, 0, "a restricted session is never granted tools");
  assert.deepEqual(appServers(), [], "one-shot: the process is gone after the turn");
  for (const c of cwds.filter((x) => x.includes("restricted-"))) assert.equal(existsSync(c), false, "its cwd is removed");
});

test("P-PRV-05 native: the vcsIdentity is in the app-server's environment; a changed identity gets a new native thread", { timeout: 120_000 }, async (t) => {
  const f = await nativeFixture(t);
  const ex = f.executor();
  const ann = { name: "Ann Example", email: "ann@example.org" };
  const s1 = await prepared(ex, f.setup({ vcsIdentity: ann }));
  assert.ok(appServers().some((pid) => procText(pid, "environ").split("\0").includes("GIT_AUTHOR_EMAIL=ann@example.org")));
  const bob = { name: "Bob Example", email: "bob@example.org" };
  const annKey = sessionBindingKey(f.setup({ vcsIdentity: ann }));
  const s2 = await prepared(ex, f.setup({ vcsIdentity: bob, resume: { nativeSessionId: s1.nativeSessionId, bindingKey: annKey } }));
  assert.deepEqual(s2.continuity, { kind: "reset", reason: "session_binding_changed" });
  assert.notEqual(s2.nativeSessionId, s1.nativeSessionId);
  const envs = appServers().map((pid) => procText(pid, "environ").split("\0"));
  assert.ok(envs.some((e) => e.includes("GIT_COMMITTER_EMAIL=bob@example.org")));
  assert.equal(envs.some((e) => e.includes("GIT_AUTHOR_EMAIL=ann@example.org")), false, "the old process was replaced");
});
