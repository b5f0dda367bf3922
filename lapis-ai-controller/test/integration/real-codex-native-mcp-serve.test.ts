// External MCP launch descriptions end to end: serve with the native Codex
// provider, the SDK registering an `mcp` endpoint, the real app-server
// launching the tiny stdio server (only the model is scripted). Only the
// endpoint id is stored; env values reach the MCP child through the process
// environment and nothing the controller writes (database files, logs)
// carries them. A restricted thread is refused; a gone endpoint fails the
// turn before anything launches (P-PRV-07..10, P-PRV-15).
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ClientError } from "../../src/client.ts";
import { startAgentServe } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";
import { descendants } from "../support/proc-tree.ts";

const SERVER = join(import.meta.dirname, "..", "support", "tiny-mcp-server.ts");
const LISTED = "TINY_MCP_LISTED";
const UNLISTED = "TINY_MCP_UNLISTED";
const LISTED_VALUE = `CANARY-listed-mcp-${process.pid}-4f1c9a`;
const UNLISTED_VALUE = `CANARY-unlisted-mcp-${process.pid}-8b2e7d`;

function filesUnder(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) filesUnder(p, out);
    else if (st.isFile()) out.push(p);
  }
  return out;
}

/** Open sockets of the serve process. */
function serveSockets(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try { if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith("socket:")) n += 1; } catch { /* closed meanwhile */ }
  }
  return n;
}

async function refused(p: Promise<unknown>): Promise<string> {
  try { await p; return "accepted"; } catch (e) { return e instanceof ClientError ? e.code : "thrown"; }
}

test("P-PRV-07 P-PRV-08 P-PRV-09 P-PRV-10 P-PRV-15 P-PRV-20 P-PRV-21 P-PRV-23 external MCP launch descriptions through serve and the SDK", { timeout: 300_000 }, async (t) => {
  const providers = { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV, LISTED, UNLISTED], setupTimeoutMs: 60_000, killGraceMs: 3_000 } };
  const serve = await startAgentServe(t, [], { providers }, { [LISTED]: LISTED_VALUE, [UNLISTED]: UNLISTED_VALUE });
  const c = await serve.client();
  const reports = join(serve.dir, "reports");
  mkdirSync(reports);
  const report = join(reports, "tiny.json");
  const descriptor = { name: "tiny", command: process.execPath, args: [SERVER, report, LISTED, UNLISTED], envVars: [LISTED], required: true };
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex", binding: { mcpEndpoints: ["ext-mcp"] } })).threadId);

  await t.test("P-PRV-08 descriptions are validated at registration: env values, reserved names and restricted threads are refused", async () => {
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp", mcpServers: [{ ...descriptor, env: { [LISTED]: "x" } }] })), "invalid_params");
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp", mcpServers: [{ ...descriptor, envVars: ["LAPIS_TOOL_BRIDGE_TOKEN"] }] })), "mcp_env_reserved");
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp", mcpServers: [{ ...descriptor, name: "lapis-app-tools" }] })), "mcp_descriptor_invalid");
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "tools", mcpServers: [descriptor] })), "invalid_params");
    // P-PRV-20, P-PRV-21: a credential in argv, no server at all, a command relative to the agent's directory.
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp", mcpServers: [{ ...descriptor, args: [SERVER, `ghp_${"A1b2C3d4E5".repeat(4)}`] }] })), "mcp_secret_in_argv");
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp", mcpServers: [] })), "mcp_descriptor_invalid");
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp" })), "mcp_descriptor_invalid");
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "bad", kind: "mcp", mcpServers: [{ ...descriptor, command: "./srv" }] })), "mcp_descriptor_invalid");
    assert.equal(await refused(c.createThread({ workspace: "ws", provider: "codex", binding: { restricted: true, mcpEndpoints: ["ext-mcp"] } })), "mcp_restricted");
    const restricted = String((await c.createThread({ workspace: "ws", provider: "codex", binding: { restricted: true } })).threadId);
    assert.equal(await refused(c.call("endpoints.register", { endpointId: "r", kind: "mcp", threadId: restricted, mcpServers: [descriptor] })), "mcp_restricted");
  });

  await t.test("P-PRV-07 P-PRV-09 P-PRV-15 the listed value reaches the MCP child, the unlisted never; neither is in the database or the logs", async () => {
    await c.registerEndpoint({ endpointId: "ext-mcp", kind: "mcp", threadId, mcpServers: [descriptor] });
    serve.model.push({ text: ["with mcp"] });
    const turnId = String((await c.submitTurn(threadId, { text: "hello" })).turnId);
    const view = await waitTurn(c, turnId, ["completed", "failed"], 90_000);
    assert.equal(view.state, "completed", String(view.errorCode));
    const seen = JSON.parse(readFileSync(report, "utf8")) as { env: Record<string, string | null> };
    assert.equal(seen.env[LISTED], LISTED_VALUE);
    assert.equal(seen.env[UNLISTED], null);
    // Only the endpoint identity is stored with the thread.
    const rows = readDb<{ binding: string }>(serve.databasePath, "SELECT binding FROM threads WHERE thread_id = ?", threadId);
    assert.deepEqual(JSON.parse(rows[0]?.binding ?? "{}").mcpEndpoints, ["ext-mcp"]);
    const written = filesUnder(join(serve.dir, "controller"));
    assert.ok(written.some((f) => f.endsWith("controller.sqlite")));
    for (const file of written) {
      const bytes = readFileSync(file);
      for (const v of [LISTED_VALUE, UNLISTED_VALUE, report]) assert.equal(bytes.includes(v), false, `${v.slice(0, 20)} not in ${file}`);
    }
    for (const log of [serve.stdout(), serve.stderr()]) for (const v of [LISTED_VALUE, UNLISTED_VALUE]) assert.equal(log.includes(v), false);
  });

  await t.test("P-PRV-10 a disconnected descriptor endpoint fails the turn closed before anything launches", async () => {
    const other = await serve.client();
    const second = String((await c.createThread({ workspace: "ws", provider: "codex", binding: { mcpEndpoints: ["gone-mcp"] } })).threadId);
    const goneReport = join(reports, "gone.json");
    await other.registerEndpoint({ endpointId: "gone-mcp", kind: "mcp", threadId: second, mcpServers: [{ ...descriptor, args: [SERVER, goneReport] }] });
    const sockets = serveSockets(serve.pid);
    other.close();
    // Submit only once serve has seen the disconnect (its socket to that client is gone).
    const end = Date.now() + 10_000;
    while (serveSockets(serve.pid) >= sockets && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assert.ok(serveSockets(serve.pid) < sockets, "serve closed the connection");
    const before = serve.model.requests.length;
    const turnId = String((await c.submitTurn(second, { text: "MUST-NOT-ARRIVE" })).turnId);
    const view = await waitTurn(c, turnId, ["failed", "completed"], 30_000);
    assert.equal(view.state, "failed");
    assert.equal(view.errorCode, "endpoint_disconnected");
    assert.equal(existsSync(goneReport), false, "the MCP server never started");
    assert.equal(serve.model.requests.length, before, "the model was never asked");
    rmSync(goneReport, { force: true });
  });

  await t.test("P-PRV-23 an mcp endpoint disconnecting mid-turn: the turn fails endpoint_disconnected, Codex and the server it launched are stopped, no process is left", async () => {
    const other = await serve.client();
    const third = String((await c.createThread({ workspace: "ws", provider: "codex", binding: { mcpEndpoints: ["mid-mcp"] } })).threadId);
    const midReport = join(reports, "mid.json");
    await other.registerEndpoint({ endpointId: "mid-mcp", kind: "mcp", threadId: third, mcpServers: [{ ...descriptor, args: [SERVER, midReport, LISTED] }] });
    const before = new Set(descendants(serve.pid));
    // The model thinks (stalls) while the server runs: the turn is in flight.
    serve.model.push({ stall: true });
    const asked = serve.model.requests.length;
    const turnId = String((await c.submitTurn(third, { text: "think" })).turnId);
    await serve.model.waitForRequests(asked + 1, 90_000);
    const up = Date.now() + 30_000;
    while (!existsSync(midReport) && Date.now() < up) await new Promise((r) => setTimeout(r, 50));
    const server = (JSON.parse(readFileSync(midReport, "utf8")) as { pid: number }).pid;
    const started = descendants(serve.pid).filter((p) => !before.has(p));
    assert.ok(started.includes(server), "the MCP server runs under serve's agent");
    other.close();
    const view = await waitTurn(c, turnId, ["failed", "completed", "interrupted"], 30_000);
    assert.equal(view.state, "failed");
    assert.equal(view.errorCode, "endpoint_disconnected");
    const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
    const end = Date.now() + 15_000;
    while (started.some(alive) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(started.filter(alive), [], "no process of that session is left");
  });
});
