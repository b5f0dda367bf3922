// The MCP tool bridge checks Host like the protocol listener (issue 25 D8):
// a request naming a foreign host (the DNS-rebinding shape) is refused 403
// before the bearer or the body is read; loopback names with the bridge's
// own port reach MCP. Raw HTTP over loopback against the real bridge.
import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { applicationToolHost } from "../../../src/capture/capture-port.ts";
import { EndpointRegistry } from "../../../src/domain/endpoint-registration.ts";
import { hostAllowed, originAllowed } from "../../../src/domain/loopback-host.ts";
import { ToolBridge } from "../../../src/execution/tool-bridge.ts";

function post(url: URL, host: string, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
  return new Promise((resolve, reject) => {
    const req = request({
      host: "127.0.0.1", port: url.port, path: url.pathname, method: "POST", timeout: 5_000,
      headers: { ...headers, host, "content-type": "application/json", accept: "application/json, text/event-stream", "content-length": String(Buffer.byteLength(body)) },
    }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body);
  });
}

test("AIC-OPER-08 the MCP bridge refuses a foreign Host; loopback names with its port pass", async (t) => {
  const registry = new EndpointRegistry(4);
  const bridge = await ToolBridge.start(applicationToolHost(() => registry, 2_000));
  t.after(() => bridge.close());
  const grant = bridge.grant({ principal: "alice", application: "notes", threadId: "thread-a" });
  assert.ok(grant);
  const url = new URL(grant.server.url);
  const auth = { authorization: String(grant.server.headers[0]?.value) };
  for (const host of [`evil.example:${url.port}`, `127.0.0.1:${Number(url.port) + 1}`, "127.0.0.1"]) {
    assert.equal(await post(url, host, auth), 403, host);
  }
  assert.equal(await post(url, `evil.example:${url.port}`, {}), 403, "Host is checked before the bearer");
  for (const host of [`127.0.0.1:${url.port}`, `localhost:${url.port}`, `[::1]:${url.port}`]) {
    assert.equal(await post(url, host, auth), 200, host);
  }
  assert.equal(bridge.callCount, 0);
});

test("AIC-OPER-08 host and origin rules: loopback names with the exact port; Origin only when listed", () => {
  assert.ok(hostAllowed("127.0.0.1:7347", 7347) && hostAllowed("LOCALHOST:7347", 7347) && hostAllowed("[::1]:7347", 7347));
  assert.ok(!hostAllowed("127.0.0.1:7348", 7347) && !hostAllowed("evil.example:7347", 7347) && !hostAllowed(undefined, 7347) && !hostAllowed("127.0.0.1", 7347));
  assert.ok(hostAllowed("10.0.0.5:7347", 7347, "10.0.0.5"), "a configured listen host is its own name");
  assert.ok(originAllowed(undefined, []), "no Origin: not a browser");
  assert.ok(!originAllowed("http://evil.example", []) && !originAllowed("null", ["http://a.test"]));
  assert.ok(originAllowed("http://A.test", ["http://a.test"]));
});
