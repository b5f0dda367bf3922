// Run by Node from the Deno lane: seeds, verifies or probes a database so the
// lane proves both runtimes read and write the same file.
//   node test/deno/node-helper.ts seed|verify|probe <db path> [retention]

import process from "node:process";
import type { RetentionProfile } from "../../src/domain/records.ts";
import { openSqliteStore } from "../../src/persistence/sqlite-store.ts";
import { seedEveryTable } from "../support/seeded-store.ts";

const [mode, path, retention] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: node-helper.ts seed|verify|probe <db path> [retention]");
if (mode === "seed") {
  seedEveryTable(path, (retention ?? "full") as RetentionProfile);
  process.stdout.write("seeded\n");
} else {
  const opened = openSqliteStore({ path, lockWaitMs: 0 });
  if (!opened.ok) {
    process.stdout.write(`${JSON.stringify(opened.error)}\n`);
    process.exitCode = 1;
  } else {
    const store = opened.value;
    process.stdout.write(`${JSON.stringify({ ok: true, lastSeq: store.journal.lastSeq("thread-1"), turns: store.turns.listByThread("thread-1").length })}\n`);
    store.close();
  }
}
