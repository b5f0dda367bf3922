// Tool grants of the AcpExecutor against the scripted ACP agent: a normal
// session gets the bridge in session/new, a restricted one gets none and is
// never granted; a replaced or closed session's grant is revoked. P-PRV-19, P-ARC-23.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { AcpExecutor } from "../../../src/execution/acp-executor.ts";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import type { SessionSetup } from "../../../src/execution/executor.ts";
import type { ToolGrant } from "../../../src/execution/tool-bridge.ts";
import { scriptedAgent } from "../../support/scripted-agent-fixture.ts";

function setup(over: Partial<SessionSetup> = {}): SessionSetup {
  return { sessionKey: "t1:scripted", threadId: "t1", providerId: "scripted", cwd: mkdtempSync(join(tmpdir(), "ctl-ws-")), restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {}, ...over };
}

test("P-PRV-19 P-ARC-23 restricted sessions get no application tools; others get one bridge server, revoked with the session", async () => {
  const agent = scriptedAgent({ modes: "advertise", modeIds: ["agent", "read-only"] });
  const asked: SessionSetup[] = [];
  let revoked = 0;
  const grant = (s: SessionSetup): ToolGrant => {
    asked.push(s);
    return { server: { type: "http", name: "lapis-app-tools", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "Bearer test-only" }] }, revoke: () => { revoked += 1; } };
  };
  const ex = new AcpExecutor({ providers: [agent.provider], host: currentLaunchHost(), env: process.env, tmpRoot: agent.dir, tools: grant });
  try {
    const restricted = await ex.prepare(setup({ sessionKey: "t2:scripted", threadId: "t2", restricted: true }));
    assert.ok(restricted.ok);
    await restricted.session.close();
    assert.equal(asked.length, 0, "a restricted session is never granted");
    assert.equal(agent.log().find((e) => e.event === "session_new")?.mcpServers, 0);
    const normal = await ex.prepare(setup());
    assert.ok(normal.ok);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.threadId, "t1");
    assert.equal(agent.log().filter((e) => e.event === "session_new").at(-1)?.mcpServers, 1);
    // A changed binding replaces the session: the old grant is revoked at once.
    const replaced = await ex.prepare(setup({ cwd: mkdtempSync(join(tmpdir(), "ctl-ws-")) }));
    assert.ok(replaced.ok);
    assert.equal(revoked, 1);
  } finally {
    await ex.close();
  }
  assert.equal(revoked, 2, "closing the executor revokes the live grant");
});

test("P-DNO-04 a session offered no tools gets no bridge server; tools offered later open a session with it", async () => {
  const agent = scriptedAgent({ modes: "advertise", modeIds: ["agent", "read-only"] });
  let granted = 0;
  let revoked = 0;
  let names: string[] = [];
  const grant = (): ToolGrant => {
    granted += 1;
    return { server: { type: "http", name: "lapis-app-tools", url: "http://127.0.0.1:9/mcp", headers: [{ name: "Authorization", value: "Bearer test-only" }] }, revoke: () => { revoked += 1; } };
  };
  const ex = new AcpExecutor({ providers: [agent.provider], host: currentLaunchHost(), env: process.env, tmpRoot: agent.dir, tools: grant, offered: () => names });
  const servers = () => agent.log().filter((e) => e.event === "session_new").map((e) => e.mcpServers);
  try {
    const cwd = mkdtempSync(join(tmpdir(), "ctl-ws-"));
    const bare = await ex.prepare(setup({ cwd }));
    assert.ok(bare.ok);
    assert.equal(granted, 0, "nothing to offer: never granted");
    assert.deepEqual(servers(), [0]);
    const same = await ex.prepare(setup({ cwd }));
    assert.ok(same.ok);
    assert.equal(same.session, bare.session, "still nothing offered: the session continues");
    names = ["note_write"];
    const withTools = await ex.prepare(setup({ cwd }));
    assert.ok(withTools.ok);
    assert.notEqual(withTools.session, bare.session, "a tool offered later opens a new session");
    assert.equal(granted, 1);
    assert.deepEqual(servers(), [0, 1]);
    names = [];
    const disposed = await ex.prepare(setup({ cwd }));
    assert.ok(disposed.ok);
    assert.equal(revoked, 1, "the session with the bridge ended, its grant revoked");
    assert.equal(granted, 1);
    assert.deepEqual(servers(), [0, 1, 0]);
  } finally {
    await ex.close();
  }
});
