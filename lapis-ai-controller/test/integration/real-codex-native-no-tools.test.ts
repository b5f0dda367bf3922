// The native executor over the real `codex app-server`: a session offered no
// application tools gets no bridge server in its thread config (serve then
// never loads the MCP SDK for it); a tool offered later opens a new session
// that has it (P-DNO-04).
import assert from "node:assert/strict";
import { test } from "node:test";
import { currentLaunchHost } from "../../src/execution/acp-launch.ts";
import { CodexExecutor } from "../../src/execution/codex-executor.ts";
import type { ToolGrant } from "../../src/execution/tool-bridge.ts";
import { nativeFixture, prepared } from "../support/codex-native-fixture.ts";

test("P-DNO-04 native: no tools offered, no bridge grant; a tool offered later opens a session with one", { timeout: 180_000 }, async (t) => {
  const f = await nativeFixture(t);
  let names: string[] = [];
  let granted = 0;
  let revoked = 0;
  const grant = (): ToolGrant => {
    granted += 1;
    return { server: { type: "http", name: "lapis-app-tools", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "Bearer test-only-bearer" }] }, revoke: () => { revoked += 1; } };
  };
  const ex = new CodexExecutor({ providers: [f.provider], host: currentLaunchHost(), env: f.env, tmpRoot: f.dir, tools: grant, offered: () => names });
  t.after(() => ex.close());
  const bare = await prepared(ex, f.setup());
  assert.equal(granted, 0, "nothing to offer: never granted");
  assert.equal((await prepared(ex, f.setup())).nativeSessionId, bare.nativeSessionId, "still nothing offered: the same session");
  assert.equal(granted, 0);
  names = ["note_write"];
  await prepared(ex, f.setup());
  assert.equal(granted, 1, "a tool offered later: the new session is granted the bridge");
  assert.equal(ex.spawnCount, 2);
  names = [];
  await prepared(ex, f.setup());
  assert.equal(revoked, 1, "the session with the bridge ended, its grant revoked");
  assert.equal(granted, 1);
});
