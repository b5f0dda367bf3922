// Run by Node as a child (test/unit/execution/tool-bridge-lazy.test.ts):
// records every import of the MCP SDK's server modules, imports serve's whole
// composition (src/service.ts), starts a tool bridge, grants a session and
// sends one request, printing what was loaded at each step as one JSON line.
import { registerHooks } from "node:module";
import process from "node:process";
import type { ToolHost } from "../../src/execution/tool-bridge.ts";

const loaded: string[] = [];
registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith("@modelcontextprotocol/sdk/server")) loaded.push(specifier);
    return next(specifier, context);
  },
});

const steps: Record<string, number> = {};
await import("../../src/service.ts");
const { ToolBridge } = await import("../../src/execution/tool-bridge.ts");
const host: ToolHost = { list: () => [], call: () => Promise.resolve({ ok: false, code: "tool_not_found" }) };
const bridge = await ToolBridge.start(host);
steps.afterStart = loaded.length;
const grant = bridge.grant({ principal: "p", application: "a", threadId: "t" });
if (grant === null) throw new Error("no grant");
const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
for (const h of grant.server.headers) headers[h.name] = h.value;
const res = await fetch(grant.server.url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "probe", version: "0" } } }) });
await res.text();
steps.afterRequest = loaded.length;
steps.status = res.status;
await bridge.close();
process.stdout.write(`${JSON.stringify(steps)}\n`);
