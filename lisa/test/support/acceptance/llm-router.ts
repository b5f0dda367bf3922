// Routes the scripted LLM's chat-completions requests to per-scenario
// handlers by a marker word in the invoking message, so one scripted LLM can
// serve every scenario of a test file; also parses what the model was shown.
import { jsonAnswer, type RecordedRequest, type ScriptedResponse } from "../scripted-llm.ts";

/** What one chat-completions request showed the model. */
export interface RequestView {
  /** The system message (host policy, persona, response contract). */
  readonly system: string;
  /** The first user message (the `<room_context>` block and the instruction). */
  readonly user: string;
  /** The body of the `<message ... invocation="true">` element (XML-unescaped). */
  readonly invocationBody: string;
  /** The `tool` messages so far, in order. */
  readonly toolResults: readonly string[];
  /** The names of the tools offered. */
  readonly toolNames: readonly string[];
}

/** Answers one request of a scenario. */
export type Route = (view: RequestView, request: RecordedRequest) => ScriptedResponse | Promise<ScriptedResponse>;

/** One `<message>` element of a `<room_context>` block. */
export interface ContextMessage {
  readonly attributes: Readonly<Record<string, string>>;
  readonly body: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const XML_ENTITIES: Readonly<Record<string, string>> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'" };

/** Reverses the block's XML escaping. */
export function unescapeXml(text: string): string {
  return text.replace(/&(?:amp|lt|gt|quot|apos);/g, (entity) => XML_ENTITIES[entity] ?? entity);
}

/** The `<message>` elements of a room-context block, in order. */
export function contextMessages(user: string): ContextMessage[] {
  const found: ContextMessage[] = [];
  for (const match of user.matchAll(/<message ([^>]*)>\n([\s\S]*?)\n(?:<reply_to[\s\S]*?)?<\/message>/g)) {
    const attributes: Record<string, string> = {};
    for (const attribute of (match[1] ?? "").matchAll(/([a-z_]+)="([^"]*)"/g)) {
      attributes[attribute[1] ?? ""] = unescapeXml(attribute[2] ?? "");
    }
    found.push({ attributes, body: unescapeXml(match[2] ?? "") });
  }
  return found;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (isRecord(part) && typeof part["text"] === "string" ? part["text"] : "")).join("");
  return "";
}

/** Parses a recorded request into what the model was shown. */
export function viewOf(request: RecordedRequest): RequestView {
  const body = isRecord(request.body) ? request.body : {};
  const messages = Array.isArray(body["messages"]) ? body["messages"].filter(isRecord) : [];
  const system = textOf(messages.find((m) => m["role"] === "system")?.["content"]);
  const user = textOf(messages.find((m) => m["role"] === "user")?.["content"]);
  const invocation = contextMessages(user).find((m) => m.attributes["invocation"] === "true");
  const tools = Array.isArray(body["tools"]) ? body["tools"].filter(isRecord) : [];
  return {
    system,
    user,
    invocationBody: invocation?.body ?? "",
    toolResults: messages.filter((m) => m["role"] === "tool").map((m) => textOf(m["content"])),
    toolNames: tools.map((t) => (isRecord(t["function"]) ? String(t["function"]["name"]) : "")),
  };
}

/** The default answer: short, in character, numbered by request. */
export function defaultAnswer(index: number): ScriptedResponse {
  return jsonAnswer(`Indeed, answer number ${index + 1}.`);
}

/** A scripted-LLM script that dispatches on markers; unmatched requests get `defaultAnswer`. */
export class LlmRouter {
  readonly #routes: { readonly marker: string; readonly route: Route }[] = [];
  /** Every request so far, as the model saw it, in order. */
  readonly views: RequestView[] = [];

  /** Answers requests whose invoking message contains `marker` with `route` (first added wins). */
  on(marker: string, route: Route): void {
    this.#routes.push({ marker, route });
  }

  /** The requests whose invoking message contains `marker` (routed or not). */
  requestsFor(marker: string): RequestView[] {
    return this.views.filter((view) => view.invocationBody.includes(marker));
  }

  /** The function to pass to `startScriptedLlm`. */
  readonly script = (request: RecordedRequest, index: number): ScriptedResponse | Promise<ScriptedResponse> => {
    const view = viewOf(request);
    this.views.push(view);
    const match = this.#routes.find((entry) => view.invocationBody.includes(entry.marker));
    return match === undefined ? defaultAnswer(index) : match.route(view, request);
  };
}
