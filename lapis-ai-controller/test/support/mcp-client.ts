// A real MCP client (the SDK's Streamable HTTP client) for bridge tests: it
// plays the agent's side of the application-tool bridge.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** What a test needs from an MCP session with the bridge. */
export type BridgeClient = {
  listTools(): Promise<string[]>;
  callTool(name: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }>;
  close(): Promise<void>;
};

/** Connects to `url` with the given headers (e.g. the grant's Authorization header). */
export async function connectBridge(url: string, headers: { name: string; value: string }[]): Promise<BridgeClient> {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: Object.fromEntries(headers.map((h) => [h.name, h.value])) } });
  const client = new Client({ name: "bridge-test-agent", version: "0.0.0" });
  await client.connect(transport);
  return {
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args) => {
      const r = await client.callTool({ name, arguments: args });
      const content = (r.content ?? []) as { type: string; text?: string }[];
      return { isError: r.isError === true, text: content.map((c) => c.text ?? "").join("") };
    },
    close: () => client.close(),
  };
}
