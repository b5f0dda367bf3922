import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PACKAGE_ROOT } from "../support/processes.ts";

test("P-STO-04 external provider executables remain external: the npm pack file list holds no provider binaries", () => {
  const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: PACKAGE_ROOT, encoding: "utf8", timeout: 60_000 });
  assert.equal(packed.status, 0, packed.stderr);
  const files = (JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
  assert.ok(files.includes("src/main.ts"));
  for (const file of files) {
    assert.match(file, /^(src\/.+\.ts|package\.json|deno\.json|README\.md|LICENSE)$/, file);
    const head = readFileSync(join(PACKAGE_ROOT, file)).subarray(0, 4);
    assert.notDeepEqual([...head], [0x7f, 0x45, 0x4c, 0x46], `${file} is not an executable binary`);
  }
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    assert.doesNotMatch(name, /codex|claude|gemini|opencode|qwen/, "no provider package is a runtime dependency");
  }
});
