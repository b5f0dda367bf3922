// How the terminal chat words things, apart from its I/O so it can be
// tested: one `/threads` line per thread, one `/usage` line, and a filter that lets the agent's
// notices about its setup (Codex's "Model metadata … not found") through once
// per thread per session instead of on every turn.

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago" from `at` to `now` (ms since the epoch). */
export function ago(at, now) {
  const s = Math.max(0, Math.floor((now - at) / 1000));
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/**
 * One `/threads` line: `*` and `(current)` on the open thread, its number,
 * its id, its title or first words, and its last activity.
 * `overview` is `client.threads.overview(id)`, or `{ error }` when it failed.
 */
export function threadLine(index, threadId, overview, current, now) {
  const head = `${current ? "*" : " "} ${index + 1}  ${threadId}`;
  const tail = current ? "  (current)" : "";
  if (overview.error !== undefined) return `${head}  (unavailable: ${overview.error})${tail}`;
  const name = overview.title ?? (overview.firstWords === null ? "(no messages yet)" : `"${overview.firstWords}"`);
  const when = overview.lastActivityAt === null ? "no activity" : `last active ${ago(overview.lastActivityAt, now)}`;
  const turns = overview.turnCount === undefined ? "" : `, ${overview.turnCount} turn${overview.turnCount === 1 ? "" : "s"}`;
  return `${head}  ${name}  · ${when}${turns}${overview.busy ? ", a turn is running" : ""}${tail}`;
}

/**
 * One `/usage` line: the reported tokens of `label` (`usage.get` totals), and
 * how many turns reported nothing (those are never estimated).
 */
export function usageLine(label, totals) {
  const n = (x) => x.toLocaleString("en-US");
  const reported = totals.reportedTurns === 0 ? "no usage reported"
    : `${n(totals.totalTokens)} tokens (${n(totals.inputTokens)} in, ${n(totals.cachedInputTokens)} of them cached; ${n(totals.outputTokens)} out, ${n(totals.reasoningOutputTokens)} of them reasoning) over ${totals.reportedTurns} turn${totals.reportedTurns === 1 ? "" : "s"}`;
  return `${label}: ${reported}${totals.unreportedTurns > 0 ? `; ${totals.unreportedTurns} turn${totals.unreportedTurns === 1 ? "" : "s"} unreported` : ""}`;
}

/** Most distinct notices remembered per session (the oldest is forgotten first). */
export const NOTICE_MEMORY = { default: 1000, max: 10_000 };

/**
 * Returns `shouldShow(threadId, severity, text)`: true the first time a
 * thread gets a notice in this session, false on its repeats.
 */
export function noticeFilter(limit = NOTICE_MEMORY.default) {
  const cap = Math.min(NOTICE_MEMORY.max, Math.max(1, Math.floor(limit)));
  const seen = new Set();
  return (threadId, severity, text) => {
    const key = JSON.stringify([threadId, severity, text]);
    if (seen.has(key)) return false;
    seen.add(key);
    if (seen.size > cap) seen.delete(seen.values().next().value);
    return true;
  };
}

/**
 * The turns `/fork K` can name, oldest first: the thread's completed turns
 * that were not rolled back, read from its replayed events (`turn_outcome`
 * with state completed, `turn_rolled_back`).
 */
export function forkPoints(events) {
  const rolled = new Set(events.filter((e) => e.kind === "turn_rolled_back").map((e) => e.turnId));
  return events.filter((e) => e.kind === "turn_outcome" && e.metadata?.state === "completed" && !rolled.has(e.turnId)).map((e) => e.turnId);
}

/**
 * Keeps what the person types off the screen while the agent's answer
 * streams, so typed text never lands inside the agent's output: `hold()`
 * silences the line editor's echo (the keys are still read and kept), and
 * `release()` shows the prompt again with whatever was typed meanwhile.
 * A terminal readline Interface writes its echo through `_writeToOutput`.
 */
export function typingHold(rl) {
  const write = rl._writeToOutput.bind(rl);
  let held = false;
  rl._writeToOutput = (text) => { if (!held) write(text); };
  return {
    get held() { return held; },
    hold() { held = true; },
    release() {
      if (!held) return;
      held = false;
      rl.prompt(true);
    },
  };
}

/**
 * The provider new threads use: `--executor native` or `--executor acp`
 * picks the demo config's `codex-native` or `codex-acp`; without it,
 * PROVIDER (default `codex`). Answers `{ provider }` or `{ usage }`.
 */
export function providerFor(argv, env) {
  const i = argv.indexOf("--executor");
  if (i === -1) return { provider: env.PROVIDER ?? "codex" };
  const executor = argv[i + 1];
  if (executor !== "native" && executor !== "acp") return { usage: "usage: node chat.mjs [--executor native|acp]" };
  return { provider: `codex-${executor}` };
}
