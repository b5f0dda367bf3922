// The application-tool bridge: an MCP Streamable HTTP server on 127.0.0.1
// (@modelcontextprotocol/sdk 1.32.2, stateless: one MCP server object per
// HTTP request) that serves the tools an application registered on its
// endpoint to the agent of that application's thread. Each provider session
// gets its own random bearer, handed to the agent only inside the ACP
// `session/new` request (never argv, logs or the database); the bridge keeps
// only its sha256. What a bearer may see is fixed at grant time (principal,
// application, thread: AIC-API-004d) and resolved live on every request, so a
// disposed endpoint's tools are gone at once (P-ARC-23). Provider-side MCP
// activity is observational: only a live tools/call reaches a handler (P-PRV-11).
import { createHash, randomBytes } from "node:crypto";
import { hostAllowed } from "../domain/loopback-host.ts";
import { CONTROLLER_VERSION } from "../domain/protocol.ts";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Schema } from "../domain/contract/schema.ts";
import { checkToolArguments } from "../domain/contract/tools.ts";
import { BRIDGE_MCP_NAME } from "../domain/contract/mcp-servers.ts";

/** The MCP SDK's server modules. */
type McpModules = {
  readonly Server: typeof import("@modelcontextprotocol/sdk/server/index.js").Server;
  readonly StreamableHTTPServerTransport: typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js").StreamableHTTPServerTransport;
  readonly CallToolRequestSchema: typeof import("@modelcontextprotocol/sdk/types.js").CallToolRequestSchema;
  readonly ListToolsRequestSchema: typeof import("@modelcontextprotocol/sdk/types.js").ListToolsRequestSchema;
};
let mcpModules: Promise<McpModules> | null = null;

/**
 * The MCP SDK's server modules, loaded at the bridge's first request rather
 * than at serve's start: a serve whose agents never reach the bridge (no
 * application tools, no memory tools) never holds them (about 6-7 MiB of a
 * Deno serve's resident set, docs/performance.md). A failed load is retried
 * at the next request.
 */
function loadMcp(): Promise<McpModules> {
  mcpModules ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([index, http, types]) => ({
    Server: index.Server,
    StreamableHTTPServerTransport: http.StreamableHTTPServerTransport,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
  }), (error: unknown) => {
    mcpModules = null;
    throw error;
  });
  return mcpModules;
}

/** Whom a bridge grant serves: server-derived, never a client's claim. */
export type ToolBinding = { readonly principal: string; readonly application: string; readonly threadId: string };

/** One tool as listed to the agent: the application's description and input schema, offered as they are. */
export type BridgeTool = { readonly name: string; readonly mutating: boolean; readonly description: string; readonly inputSchema: Schema };

/** The application-tool host behind the bridge (endpoint registry + capture port, composed by the service). */
export type ToolHost = {
  list(binding: ToolBinding): readonly BridgeTool[];
  call(binding: ToolBinding, tool: string, args: unknown): Promise<{ ok: true; value: unknown } | { ok: false; code: string }>;
};

/** The ACP `McpServerHttp` descriptor handed to the agent in `session/new`. */
export type McpHttpServer = { type: "http"; name: string; url: string; headers: { name: string; value: string }[] };

/** A live grant; revoke() invalidates its bearer at once. */
export type ToolGrant = { readonly server: McpHttpServer; revoke(): void };

/** Bridge limits, capped in code. `maxArgumentDepth` bounds the JSON nesting of a call's arguments. */
export type BridgeLimits = { maxBodyBytes: number; maxGrants: number; maxArgumentDepth?: number };
export const BRIDGE_LIMIT_DEFAULTS = { maxBodyBytes: 1024 * 1024, maxGrants: 256, maxArgumentDepth: 64 } as const satisfies Required<BridgeLimits>;
export const BRIDGE_LIMIT_CAPS = { maxBodyBytes: 16 * 1024 * 1024, maxGrants: 4096, maxArgumentDepth: 256 } as const satisfies Required<BridgeLimits>;

/** The MCP server name the agent sees. */
export const BRIDGE_SERVER_NAME = BRIDGE_MCP_NAME;

const digest = (bearer: string): string => createHash("sha256").update(bearer).digest("hex");

function deny(res: ServerResponse, status: number): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: status === 401 ? "unauthorized" : "rejected" }, id: null }));
}

function readBody(req: IncomingMessage, max: number): Promise<unknown | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (b: Buffer) => { size += b.length; if (size > max) { req.destroy(); resolve(undefined); } else chunks.push(b); });
    req.on("end", () => { try { resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))); } catch { resolve(undefined); } });
    req.on("error", () => resolve(undefined));
  });
}

/** The running bridge. */
export class ToolBridge {
  readonly #host: ToolHost;
  readonly #limits: Required<BridgeLimits>;
  readonly #grants = new Map<string, ToolBinding>();
  #http: HttpServer | null = null;
  #url = "";
  #port = 0;
  #calls = 0;

  private constructor(host: ToolHost, limits: BridgeLimits) {
    this.#host = host;
    this.#limits = {
      maxBodyBytes: Math.min(limits.maxBodyBytes, BRIDGE_LIMIT_CAPS.maxBodyBytes),
      maxGrants: Math.min(limits.maxGrants, BRIDGE_LIMIT_CAPS.maxGrants),
      maxArgumentDepth: Math.min(limits.maxArgumentDepth ?? BRIDGE_LIMIT_DEFAULTS.maxArgumentDepth, BRIDGE_LIMIT_CAPS.maxArgumentDepth),
    };
  }

  /** Starts the bridge on 127.0.0.1 with an ephemeral port. */
  static async start(host: ToolHost, limits: BridgeLimits = BRIDGE_LIMIT_DEFAULTS): Promise<ToolBridge> {
    const bridge = new ToolBridge(host, limits);
    const http = createServer((req, res) => { void bridge.#handle(req, res); });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    bridge.#http = http;
    bridge.#port = (http.address() as AddressInfo).port;
    bridge.#url = `http://127.0.0.1:${bridge.#port}/mcp`;
    return bridge;
  }

  /** Live grants (diagnostics and tests). */
  get grantCount(): number { return this.#grants.size; }
  /** tools/call requests that reached a host (diagnostics and tests). */
  get callCount(): number { return this.#calls; }

  /** Issues a fresh bearer for one provider session; `null` past the grant limit. */
  /** The names the bridge lists for a binding now (sorted): a session offered another set is replaced (agents cache tools/list). */
  offered(binding: ToolBinding): readonly string[] {
    return this.#host.list(binding).map((t) => t.name).sort();
  }

  grant(binding: ToolBinding): ToolGrant | null {
    if (this.#grants.size >= this.#limits.maxGrants) return null;
    // The agent's first request follows its launch: load the SDK meanwhile.
    void loadMcp().catch(() => {});
    const bearer = randomBytes(32).toString("base64url");
    const key = digest(bearer);
    this.#grants.set(key, { ...binding });
    return {
      server: { type: "http", name: BRIDGE_SERVER_NAME, url: this.#url, headers: [{ name: "Authorization", value: `Bearer ${bearer}` }] },
      revoke: () => { this.#grants.delete(key); },
    };
  }

  #binding(req: IncomingMessage): ToolBinding | undefined {
    const header = req.headers.authorization;
    if (typeof header !== "string" || !header.startsWith("Bearer ")) return undefined;
    // Lookup by digest: no comparison of secret bytes, no timing channel on the bearer.
    return this.#grants.get(digest(header.slice(7)));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: only a loopback Host with the bridge's own port, before anything else is read.
    if (!hostAllowed(req.headers.host, this.#port)) return deny(res, 403);
    if ((req.url ?? "").split("?")[0] !== "/mcp") return deny(res, 404);
    const binding = this.#binding(req);
    if (binding === undefined) return deny(res, 401);
    if (req.method !== "POST") return deny(res, 405);
    const body = await readBody(req, this.#limits.maxBodyBytes);
    if (body === undefined) return deny(res, 400);
    let mcp: McpModules;
    try { mcp = await loadMcp(); } catch { return deny(res, 500); }
    const server = this.#mcpServer(mcp, binding);
    const transport = new mcp.StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => { void transport.close(); void server.close(); });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    } catch {
      if (!res.headersSent) deny(res, 500);
    }
  }

  #mcpServer(mcp: McpModules, binding: ToolBinding): Server {
    const server = new mcp.Server({ name: BRIDGE_SERVER_NAME, version: CONTROLLER_VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler(mcp.ListToolsRequestSchema, () => ({
      tools: this.#host.list(binding).map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema as { type: "object"; [key: string]: unknown },
        annotations: { readOnlyHint: !t.mutating },
      })),
    }));
    server.setRequestHandler(mcp.CallToolRequestSchema, async (request: import("@modelcontextprotocol/sdk/types").CallToolRequest) => {
      // A revoked grant answers nothing, even on a connection opened before.
      if (![...this.#grants.values()].includes(binding)) return { isError: true, content: [{ type: "text" as const, text: "endpoint_revoked" }] };
      const args = request.params.arguments ?? {};
      // Arguments outside the tool's input schema never reach the application.
      const listed = this.#host.list(binding).find((t) => t.name === request.params.name);
      // The agent learns which rule refused (a keyword, `json_too_deep`, `integer_unsafe`, `number_not_finite`), never a value.
      const invalid = listed === undefined ? null : checkToolArguments(listed.inputSchema, args, this.#limits.maxArgumentDepth);
      if (invalid !== null) return { isError: true, content: [{ type: "text" as const, text: `invalid_params: ${invalid.rule}` }] };
      this.#calls += 1;
      const r = await this.#host.call(binding, request.params.name, args);
      if (!r.ok) return { isError: true, content: [{ type: "text" as const, text: r.code }] };
      return { content: [{ type: "text" as const, text: typeof r.value === "string" ? r.value : JSON.stringify(r.value ?? null) }] };
    });
    return server;
  }

  /** Revokes every grant and stops listening. */
  async close(): Promise<void> {
    this.#grants.clear();
    const http = this.#http;
    this.#http = null;
    if (!http) return;
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  }
}
