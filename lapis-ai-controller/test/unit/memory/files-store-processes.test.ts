// Two processes writing the same revision of one record in one vault
// directory (P-MEM-04): exactly one wins, the other gets
// memory_revision_conflict, the loser's bytes never land, and the winner's
// replaced revision is kept as the one preimage.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { MarkdownFilesStore } from "../../../src/memory/lapis/files-store.ts";
import { evalModuleCommand } from "../../support/eval-module.ts";
import { episodeDoc, record } from "../../support/memory-store-contract.ts";
import { PACKAGE_ROOT } from "../../support/processes.ts";
import { tempDir } from "../../support/temp.ts";

function writer(root: string, text: string, startAt: number): Promise<string> {
  const storeUrl = new URL("../../../src/memory/lapis/files-store.ts", import.meta.url).href;
  const contractUrl = new URL("../../support/memory-store-contract.ts", import.meta.url).href;
  const script = `import { MarkdownFilesStore } from ${JSON.stringify(storeUrl)};
import { record } from ${JSON.stringify(contractUrl)};
const store = new MarkdownFilesStore(${JSON.stringify(root)});
const wait = ${startAt} - Date.now();
if (wait > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
const out = await store.put(record("user", "ep-1", 2, ${JSON.stringify(text)}), 1);
process.stdout.write(out.ok ? "ok" : out.error.code);`;
  // Each writer runs on the runtime running this file (Node, or Deno under `deno test`).
  const { command, args, env } = evalModuleCommand(script);
  const child = spawn(command, args, { cwd: PACKAGE_ROOT, env, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => { out += d.toString(); });
  return once(child, "exit").then(() => out);
}

test("P-MEM-04 two processes put the same revision at once: exactly one wins, the other conflicts", { timeout: 60_000 }, async (t) => {
  for (let round = 0; round < 3; round += 1) {
    const root = tempDir(t, "aic-mem-proc-");
    const store = new MarkdownFilesStore(root);
    assert.ok((await store.put(record("user", "ep-1", 1, "one"), 0)).ok);
    const startAt = Date.now() + 1_500;
    const results = await Promise.all([writer(root, "from a", startAt), writer(root, "from b", startAt)]);
    assert.deepEqual([...results].sort(), ["memory_revision_conflict", "ok"], `round ${round}`);
    const winner = results[0] === "ok" ? "from a" : "from b";
    assert.deepEqual(await store.get("user", "ep-1"), { ok: true, value: record("user", "ep-1", 2, winner) });
    assert.deepEqual(await store.preimages("user", "ep-1"), { ok: true, value: [{ revision: 1, content: episodeDoc("ep-1", 1, "one") }] });
    assert.deepEqual(readdirSync(join(root, "user", "records")), ["ep-1.md"], "no temporary file is left");
  }
});
