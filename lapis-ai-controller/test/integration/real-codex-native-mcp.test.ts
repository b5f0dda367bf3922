// External stdio MCP servers on the native path, against the REAL `codex
// app-server` (only the model is scripted): Codex launches the described
// server itself, passing only the environment names it lists; a required
// server that does not start fails thread/start, reported as the stable
// `mcp_required_failed`; conflicting values and a gone endpoint fail before
// any process starts (P-PRV-10, P-PRV-12..15).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import type { McpLaunch, McpResolution } from "../../src/domain/contract/mcp-servers.ts";
import { nativeFixture, prepared } from "../support/codex-native-fixture.ts";
import { descendants, procText } from "../support/proc-tree.ts";

const SERVER = join(import.meta.dirname, "..", "support", "tiny-mcp-server.ts");
const LISTED = "TINY_MCP_LISTED";
const UNLISTED = "TINY_MCP_UNLISTED";

function tiny(name: string, report: string, over: Partial<McpLaunch> = {}): McpLaunch {
  return { name, command: process.execPath, args: [SERVER, report, LISTED, UNLISTED], envVars: [LISTED], required: true, ...over };
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (check()) return true; await new Promise((r) => setTimeout(r, 50)); }
  return check();
}

test("P-PRV-12 P-PRV-13 P-PRV-15 native MCP env canary: a listed name reaches the MCP child through the process env, an unlisted one never does", { timeout: 180_000 }, async (t) => {
  const f = await nativeFixture(t);
  const reports = join(f.dir, "reports");
  mkdirSync(reports);
  const report = join(reports, "tiny.json");
  const listedValue = `listed-canary-${process.pid}-${Date.now()}`;
  const unlistedValue = `unlisted-canary-${process.pid}-${Date.now()}`;
  // The unlisted value is in the app-server's own environment (granted to the thread), yet not listed by the server.
  let resolution: McpResolution = { ok: true, launches: [tiny("tiny", report)] };
  const ex = f.executor(undefined, () => resolution);
  const s = await prepared(ex, f.setup({ envGrants: { [LISTED]: listedValue, [UNLISTED]: unlistedValue } }));
  assert.ok(s.nativeSessionId.length > 0);
  assert.ok(await until(() => existsSync(report), 30_000), "Codex started the described server");
  const seen = JSON.parse(readFileSync(report, "utf8")) as { env: Record<string, string | null>; argv: string[] };
  assert.equal(seen.env[LISTED], listedValue, "the listed name reaches the MCP child");
  assert.equal(seen.env[UNLISTED], null, "an unlisted name never reaches it");
  // Values live only in process environments, never in argv.
  for (const pid of descendants(process.pid)) {
    const cmdline = procText(pid, "cmdline");
    assert.equal(cmdline.includes(listedValue), false);
    assert.equal(cmdline.includes(unlistedValue), false);
  }
  await s.close();

  // A conflicting value for one listed name fails before anything starts.
  const spawned = ex.spawnCount;
  resolution = { ok: true, launches: [tiny("tiny", report, { envVars: ["CODEX_HOME"] })] };
  assert.deepEqual(await ex.prepare(f.setup({ sessionKey: "t3:codex-native", envGrants: { CODEX_HOME: "/elsewhere" } })), { ok: false, code: "mcp_env_conflict" });
  resolution = { ok: false, code: "endpoint_disconnected" };
  assert.deepEqual(await ex.prepare(f.setup({ sessionKey: "t4:codex-native" })), { ok: false, code: "endpoint_disconnected" });
  assert.equal(ex.spawnCount, spawned, "neither launched anything");
});

test("P-PRV-12 P-PRV-15 native MCP: a required server that does not start fails thread/start as mcp_required_failed", { timeout: 180_000 }, async (t) => {
  const f = await nativeFixture(t);
  const report = join(f.dir, "failing.json");
  const ex = f.executor(undefined, () => ({ ok: true, launches: [tiny("broken", report, { args: [SERVER, report, "fail"], envVars: [] })] }));
  const r = await ex.prepare(f.setup());
  assert.deepEqual(r, { ok: false, code: "mcp_required_failed" });
  assert.ok(existsSync(report), "Codex did try to start it");
  // Not required: the same failing server does not stop the session.
  const lenient = f.executor(undefined, () => ({ ok: true, launches: [tiny("broken", report, { args: [SERVER, report, "fail"], envVars: [], required: false })] }));
  const s = await prepared(lenient, f.setup({ sessionKey: "t2:codex-native", threadId: "t2" }));
  assert.ok(s.nativeSessionId.length > 0);
  await s.close();
});
