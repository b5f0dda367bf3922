// Shared fakes for the llm/ unit tests: an LlmConfig, a recording logger and a
// fake ToolSession with an in-memory source registry.

import type { LlmConfig, PersonaConfig } from "../../../src/config/types.ts";
import { Secret } from "../../../src/config/secret.ts";
import type { LogFields, Logger } from "../../../src/log/logger.ts";
import type { SourceEntry, ToolDefinition, ToolResult, ToolSession } from "../../../src/tools/port.ts";
import { CANARY } from "../../support/config.ts";

/** An LLM configuration pointing at `baseUrl`, with the canary key. */
export function llmConfig(baseUrl: string, overrides: Partial<Record<keyof LlmConfig, unknown>> = {}): LlmConfig {
  return {
    base_url: baseUrl,
    api_key: new Secret("llm.api_key", CANARY.llmKey),
    extra_headers: {},
    model: "test-model",
    response_format: "none",
    request_timeout_seconds: 10,
    max_output_tokens: 700,
    max_request_characters: 120_000,
    max_response_characters: 2_000,
    max_iterations: 8,
    max_tool_calls: 6,
    temperature: 0.7,
    ...overrides,
  } as LlmConfig;
}

/** A persona configuration with recognisable text. */
export const PERSONA: PersonaConfig = {
  path: "/dev/null",
  generic_error: "Oops [Error: {error_code}]",
  overload_error: "Too much.",
  status_searching: "searching the web…",
  status_reading: "reading {host}…",
  status_reading_page: "reading a page…",
  status_working: "working on it…",
  text: "PERSONA-MARKER: You are Lisa, who says 'indeed' often.",
};

/** One recorded log line. */
export interface LogLine {
  readonly level: string;
  readonly event: string;
  readonly fields: LogFields;
}

/** A Logger that keeps every line (bindings merged into fields). */
export function recordingLogger(): Logger & { lines: LogLine[]; dump(): string } {
  const lines: LogLine[] = [];
  const make = (bindings: LogFields): Logger => {
    const at = (level: string) => (event: string, fields: LogFields = {}) => {
      lines.push({ level, event, fields: { ...bindings, ...fields } });
    };
    return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: (more) => make({ ...bindings, ...more }) };
  };
  return Object.assign(make({}), { lines, dump: () => JSON.stringify(lines) });
}

/** The three research tools as definitions. */
export const TOOL_DEFINITIONS: readonly ToolDefinition[] = [
  { name: "web_search", description: "Search the web.", parameters: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false } },
  { name: "fetch_web_page", description: "Fetch a page.", parameters: { type: "object", properties: { url: { type: "string" } }, required: ["url"], additionalProperties: false } },
  { name: "html_to_markdown", description: "Convert HTML.", parameters: { type: "object", properties: { artifact_id: { type: "string" } }, required: ["artifact_id"], additionalProperties: false } },
];

/** What a fake tool handler returns: a result plus the URLs it registers as sources on success. */
export interface FakeOutcome {
  readonly result: ToolResult;
  readonly registers?: readonly string[];
}

/** A fake tool session: scripted handlers, recorded calls, and a real-enough source registry. */
export function fakeToolSession(
  handlers: Readonly<Record<string, (args: Record<string, unknown>) => FakeOutcome | Promise<FakeOutcome>>> = {},
  definitions: readonly ToolDefinition[] = TOOL_DEFINITIONS,
): ToolSession & { calls: { name: string; rawArguments: string }[]; closed: boolean } {
  const registry = new Map<string, SourceEntry>();
  let material = false;
  const session = {
    calls: [] as { name: string; rawArguments: string }[],
    closed: false,
    definitions: () => definitions,
    async execute(name: string, rawArguments: string): Promise<ToolResult> {
      session.calls.push({ name, rawArguments });
      const handler = handlers[name];
      if (!definitions.some((d) => d.name === name) || handler === undefined) {
        return { ok: false, code: "unknown_tool", content: "No such tool.", metadata: {} };
      }
      let args: unknown;
      try {
        args = JSON.parse(rawArguments);
      } catch {
        return { ok: false, code: "invalid_arguments", content: "Arguments were not valid JSON.", metadata: {} };
      }
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        return { ok: false, code: "invalid_arguments", content: "Arguments must be an object.", metadata: {} };
      }
      const outcome = await handler(args as Record<string, unknown>);
      if (outcome.result.ok) {
        for (const url of outcome.registers ?? []) registry.set(new URL(url).href, { url: new URL(url).href, title: `Title of ${url}` });
        if ((outcome.registers ?? []).length > 0) material = true;
      }
      return outcome.result;
    },
    sources: {
      resolve(url: string): SourceEntry | null {
        try {
          return registry.get(new URL(url).href) ?? null;
        } catch {
          return null;
        }
      },
      materialResultsUsed: () => material,
    },
    close() {
      session.closed = true;
    },
  };
  return session;
}

/** A successful fake result; like the real session, metadata the model needs is repeated in the content. */
export function okResult(content: string, metadata: Record<string, unknown> = {}): ToolResult {
  const shown = Object.keys(metadata).length === 0 ? content : `${JSON.stringify(metadata)}\n\n${content}`;
  return { ok: true, code: "ok", content: shown, metadata };
}

/** A failed fake result. */
export function failedResult(code: string, content = "It failed."): ToolResult {
  return { ok: false, code, content, metadata: {}, retryable: false };
}

/** The `messages` array of a recorded request body. */
export function messagesOf(body: unknown): { role: string; content: string | null; tool_call_id?: string; tool_calls?: { id: string; function: { name: string; arguments: string } }[] }[] {
  return (body as { messages: never[] }).messages;
}

/** The tool names offered in a recorded request body (empty when `tools` is absent). */
export function toolNamesOf(body: unknown): string[] {
  const tools = (body as { tools?: { function: { name: string } }[] }).tools ?? [];
  return tools.map((tool) => tool.function.name);
}
