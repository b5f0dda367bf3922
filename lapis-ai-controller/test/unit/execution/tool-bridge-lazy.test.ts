// P-DNO-02: serve's start never loads the MCP SDK's server modules; the tool
// bridge loads them at its first grant or request (a serve whose agents never
// reach the bridge never holds them). Counted in a child process, whose module
// graph is serve's alone (this test file's own imports do not mix in).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { test } from "node:test";

const PROBE = join(import.meta.dirname, "..", "..", "support", "mcp-load-probe.ts");

test("P-DNO-02 serve's composition loads no MCP server module; the bridge's first grant and request load them and answer", () => {
  const child = spawnSync(process.execPath, [PROBE], { encoding: "utf8", timeout: 60_000 });
  assert.equal(child.status, 0, child.stderr);
  const steps = JSON.parse(child.stdout.trim()) as { afterStart: number; afterRequest: number; status: number };
  assert.equal(steps.afterStart, 0);
  assert.equal(steps.afterRequest, 2);
  assert.equal(steps.status, 200);
});
