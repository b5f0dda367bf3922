// Measures one replay page (100 events) in a short and in a long thread, in
// the same run: with the cursor and LIMIT in the SQL a page costs the same
// whatever the thread's length (issue 25 point 8). Each length is measured
// with events whose payload is stored as JSON (`activity`) and with streamed
// chunks (`text` with a message id), whose payload is stored as its raw text
// and rebuilt at read (P-STO-42).
// Run: node_modules/.bin/node bench/replay-page.ts   (prints one JSON line per thread length, kind and cursor)
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../src/persistence/sqlite-store.ts";

const N = 300;
const PAGE = 100;
const dir = mkdtempSync(join(tmpdir(), "aic-bench-replay-"));
const opened = openSqliteStore({ path: join(dir, "controller.sqlite") });
if (!opened.ok) throw new Error(opened.error.code);
const store = opened.value;
try {
  for (const [length, kind] of [[1_000, "activity"], [1_000, "text"], [100_000, "activity"], [100_000, "text"]] as const) {
    const threadId = `thread-${length}-${kind}`;
    const inserted = store.threads.insert({ threadId, principal: "p", application: "a", workspaceId: "ws", provider: "x", retention: "full", restricted: false, configVersion: 1, config: {}, binding: {}, createdAt: 0, updatedAt: 0 });
    if (!inserted.ok) throw new Error(inserted.error.code);
    store.transact(() => {
      for (let i = 1; i <= length; i++) {
        const messageId = kind === "text" ? `msg-${Math.floor(i / 50)}` : undefined;
        store.journal.append({ threadId, turnId: null, visibility: "transcript", kind, messageId, metadata: messageId === undefined ? {} : { messageId }, payload: { text: `event ${i}` }, createdAt: i });
      }
    });
    for (const [where, afterSeq] of [["head", 0], ["tail", length - PAGE]] as const) {
      const times: number[] = [];
      for (let i = 0; i < N; i++) {
        const t0 = performance.now();
        const page = store.journal.replay(threadId, afterSeq, PAGE);
        times.push(performance.now() - t0);
        if (page.events.length !== PAGE) throw new Error("short page");
      }
      times.sort((a, b) => a - b);
      const q = (p: number) => Number((times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0).toFixed(3));
      console.log(JSON.stringify({ threadRows: length, kind, page: PAGE, cursor: where, pages: N, medianMs: q(0.5), p95Ms: q(0.95) }));
    }
  }
} finally {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}
