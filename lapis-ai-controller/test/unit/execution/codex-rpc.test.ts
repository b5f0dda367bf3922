// The app-server JSON-RPC connection: framing and id spaces over in-memory
// streams, then the handshake against the real installed `codex app-server`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import { resolveCodexLaunch } from "../../../src/execution/codex-launch.ts";
import { CodexRpc, RPC_CODES, type ServerAnswer } from "../../../src/execution/codex-rpc.ts";
import { tempDir } from "../../support/temp.ts";

function pair(request: (m: string, p: unknown) => Promise<ServerAnswer> = async (m) => ({ error: { code: RPC_CODES.methodNotFound, message: m } }), maxLineBytes = 1024) {
  const toClient = new PassThrough();
  const fromClient = new PassThrough();
  const notes: [string, unknown][] = [];
  const rpc = new CodexRpc(toClient, fromClient, { notification: (m, p) => notes.push([m, p]), request }, { maxLineBytes });
  const sent: Record<string, unknown>[] = [];
  let rest = "";
  fromClient.on("data", (b: Buffer) => {
    rest += b.toString("utf8");
    const lines = rest.split("\n");
    rest = lines.pop() ?? "";
    for (const l of lines) sent.push(JSON.parse(l) as Record<string, unknown>);
  });
  return { rpc, notes, sent, serverSays: (o: unknown) => toClient.write(`${JSON.stringify(o)}\n`), toClient };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

test("P-PRV-18 server request ids are their own space: a server request id 0 is answered, our request id 0 still waits for its reply", async () => {
  const p = pair(async (method) => (method === "item/commandExecution/requestApproval" ? { result: { decision: "decline" } } : { error: { code: RPC_CODES.methodNotFound, message: "unknown" } }));
  const reply = p.rpc.request("thread/start", {}, 1_000);
  await tick();
  assert.deepEqual(p.sent[0], { id: 0, method: "thread/start", params: {} });
  assert.equal("jsonrpc" in (p.sent[0] ?? {}), false, "no jsonrpc field on the wire");
  p.serverSays({ id: 0, method: "item/commandExecution/requestApproval", params: {} });
  p.serverSays({ id: 1, method: "x/unknown", params: {} });
  await tick();
  assert.deepEqual(p.sent[1], { id: 0, result: { decision: "decline" } });
  assert.deepEqual(p.sent[2], { id: 1, error: { code: -32601, message: "unknown" } });
  p.serverSays({ id: 0, result: { thread: { id: "th" } } });
  assert.deepEqual(await reply, { ok: true, result: { thread: { id: "th" } } });
  p.serverSays({ method: "warning", params: { message: "w" } });
  await tick();
  assert.deepEqual(p.notes, [["warning", { message: "w" }]]);
  p.rpc.close();
});

test("P-PRV-18 every request has a deadline, close settles pending requests, an oversized line ends the connection", async () => {
  const p = pair();
  assert.deepEqual(await p.rpc.request("turn/start", {}, 20), { ok: false, error: "timeout" });
  const pending = p.rpc.request("turn/start", {}, 5_000);
  p.toClient.write("x".repeat(2_000));
  assert.deepEqual(await pending, { ok: false, error: "closed" });
  assert.equal(p.rpc.open, false);
  assert.deepEqual(await p.rpc.request("turn/start", {}, 5_000), { ok: false, error: "closed" });
});

test("P-PRV-18 the real app-server refuses a request before initialize, then initializes", { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t, "codex-rpc-");
  const r = resolveCodexLaunch({}, currentLaunchHost());
  assert.equal(r.ok, true);
  if (!r.ok) return;
  const child = spawn(r.launch.command, r.launch.args, { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, CODEX_HOME: dir }, stdio: ["pipe", "pipe", "ignore"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  t.after(async () => { child.kill("SIGKILL"); await exited; });
  const rpc = new CodexRpc(child.stdout, child.stdin, { notification: () => {}, request: async () => ({ error: { code: RPC_CODES.methodNotFound, message: "no" } }) });
  const early = await rpc.request("thread/start", {}, 30_000);
  assert.equal(early.ok, false);
  assert.match(JSON.stringify(early), /Not initialized/);
  const init = await rpc.request("initialize", { clientInfo: { name: "lapis-test", title: null, version: "0" }, capabilities: null }, 30_000);
  assert.equal(init.ok, true);
  assert.match(JSON.stringify(init), /userAgent/);
  rpc.notify("initialized");
  child.stdin.end();
  await exited;
  rpc.close();
});
