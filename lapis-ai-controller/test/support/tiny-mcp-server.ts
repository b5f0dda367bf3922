// A tiny stdio MCP server for tests (run with node): it writes what it was
// started with to a report file, then serves one `echo` tool. Argv: the
// report path, then `fail` (exit at once, before any MCP traffic) or the
// environment variable names to report.
import { writeFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [report, ...rest] = process.argv.slice(2);
if (report === undefined) process.exit(2);
if (rest[0] === "fail") {
  writeFileSync(report, JSON.stringify({ started: true, failed: true }));
  process.exit(3);
}
const seen: Record<string, string | null> = {};
for (const name of rest) seen[name] = process.env[name] ?? null;
writeFileSync(report, JSON.stringify({ started: true, pid: process.pid, argv: process.argv.slice(2), env: seen, names: Object.keys(process.env).sort() }));

const server = new Server({ name: "tiny-mcp", version: "0.0.1" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: "echo", description: "Echoes its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({ content: [{ type: "text", text: String(req.params.arguments?.text ?? "") }] }));
await server.connect(new StdioServerTransport());
