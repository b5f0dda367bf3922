// A real OpenAI-compatible chat-completions server on 127.0.0.1 (node:http),
// scripted per test and recording every request it receives. It can answer
// with any status and headers, delay, send invalid or truncated bodies, drop
// connections, and emit the quirk shapes of llama.cpp, vLLM and Ollama.

import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the server received. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  /** The parsed JSON body, or undefined when it was not JSON. */
  readonly body: unknown;
}

/** How to answer one chat-completions request. */
export interface ScriptedResponse {
  /** HTTP status (200 by default). */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** Sent verbatim instead of `body` (invalid or truncated JSON, HTML ...). */
  readonly rawBody?: string;
  /** Wait this long before answering. */
  readonly delayMs?: number;
  /** Destroy the socket before any response, or after half of the body with a longer Content-Length. */
  readonly drop?: "before_response" | "mid_body";
  /**
   * A streamed body (`text/event-stream` unless `headers` say otherwise): each
   * piece written verbatim after its delay; the response ends after the last
   * piece unless `hold` keeps the connection open and silent (a stalled stream).
   */
  readonly stream?: readonly StreamPiece[];
  readonly hold?: boolean;
}

/** One write of a streamed body. */
export interface StreamPiece {
  readonly text: string;
  /** Wait this long before writing it (after the previous piece). */
  readonly delayMs?: number;
}

/** One scripted answer: fixed, or computed from the request and its 0-based index. */
export type ScriptStep = ScriptedResponse | ((request: RecordedRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>);
/** A list of steps used in order, or one function answering every request. */
export type Script = readonly ScriptStep[] | ((request: RecordedRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>);

/** A running scripted LLM. */
export interface ScriptedLlm {
  /** Base URL ending in `/v1` (what `llm.base_url` takes). */
  readonly url: string;
  /** Every chat-completions request so far, in order. */
  readonly requests: RecordedRequest[];
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

let completionCounter = 0;

/** A complete chat-completions response around one assistant message. */
export function completion(message: Record<string, unknown>, finishReason: string | null = "stop", extra: Record<string, unknown> = {}): ScriptedResponse {
  completionCounter += 1;
  return {
    body: {
      id: `chatcmpl-scripted-${completionCounter}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: "test-model",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason, logprobs: null }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      ...extra,
    },
  };
}

/** A plain text reply. */
export function textReply(content: string, finishReason = "stop"): ScriptedResponse {
  return completion({ content }, finishReason);
}

/** One call for `toolCallsReply`: arguments as an object (serialized) or a raw string. */
export interface ScriptedCall {
  readonly name: string;
  readonly arguments: unknown;
  readonly id?: string;
}

/** A standard tool-calls reply (string arguments, ids, `type: "function"`). */
export function toolCallsReply(calls: readonly ScriptedCall[]): ScriptedResponse {
  completionCounter += 1;
  const prefix = `call_${completionCounter}`;
  return completion({
    content: null,
    tool_calls: calls.map((call, index) => ({
      id: call.id ?? `${prefix}_${index}`,
      type: "function",
      function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) },
    })),
  }, "tool_calls");
}

/** A final answer in the JSON contract. */
export function jsonAnswer(markdown: string, sourceUrls: readonly string[] = []): ScriptedResponse {
  return textReply(JSON.stringify({ markdown, source_urls: sourceUrls }));
}

/** An error status with an OpenAI-style error body. */
export function errorReply(status: number, headers: Readonly<Record<string, string>> = {}, message = "scripted error"): ScriptedResponse {
  return { status, headers, body: { error: { message, type: "scripted_error", code: status } } };
}

function sendStream(res: ServerResponse, response: ScriptedResponse, pieces: readonly StreamPiece[], timers: Set<NodeJS.Timeout>): void {
  res.writeHead(response.status ?? 200, { "content-type": "text/event-stream", "cache-control": "no-cache", ...response.headers });
  let index = 0;
  let pending: NodeJS.Timeout | undefined;
  res.on("close", () => clearTimeout(pending));
  const next = (): void => {
    if (res.destroyed || res.writableEnded) return;
    const piece = pieces[index];
    if (piece === undefined) {
      if (response.hold !== true) res.end();
      return;
    }
    index += 1;
    const write = (): void => {
      if (res.destroyed || res.writableEnded) return;
      res.write(piece.text);
      next();
    };
    if ((piece.delayMs ?? 0) <= 0) return write();
    const timer = setTimeout(() => {
      timers.delete(timer);
      write();
    }, piece.delayMs);
    timers.add(timer);
    pending = timer;
  };
  next();
}

function send(res: ServerResponse, response: ScriptedResponse, timers: Set<NodeJS.Timeout> = new Set()): void {
  if (response.stream !== undefined) return sendStream(res, response, response.stream, timers);
  const text = response.rawBody ?? (response.body === undefined ? "" : JSON.stringify(response.body));
  const headers: Record<string, string | number> = { "content-type": "application/json", ...response.headers };
  if (response.drop === "mid_body") {
    res.writeHead(response.status ?? 200, { ...headers, "content-length": Buffer.byteLength(text) + 100 });
    res.write(text.slice(0, Math.floor(text.length / 2)), () => res.socket?.destroy());
    return;
  }
  res.writeHead(response.status ?? 200, { ...headers, "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Starts the server on 127.0.0.1 with an ephemeral port. */
export async function startScriptedLlm(script: Script, options: { model?: string } = {}): Promise<ScriptedLlm> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const model = options.model ?? "test-model";

  async function respond(request: RecordedRequest, index: number): Promise<ScriptedResponse> {
    if (typeof script === "function") return script(request, index);
    const step = script[index];
    if (step === undefined) return errorReply(500, {}, "script exhausted");
    return typeof step === "function" ? step(request, index) : step;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      if (req.method === "GET" && path === "/v1/models") {
        send(res, { body: { object: "list", data: [{ id: model, object: "model", owned_by: "scripted" }] } });
        return;
      }
      if (req.method !== "POST" || path !== "/v1/chat/completions") {
        send(res, errorReply(404, {}, "not found"));
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = { method: req.method, path, headers: req.headers, rawBody, body };
      const index = requests.length;
      requests.push(recorded);
      void respond(recorded, index).then((response) => {
        const answer = (): void => {
          if (res.destroyed || res.writableEnded) return;
          if (response.drop === "before_response") {
            req.socket.destroy();
            return;
          }
          send(res, response, timers);
        };
        if (response.delayMs === undefined || response.delayMs <= 0) {
          answer();
          return;
        }
        const timer = setTimeout(() => {
          timers.delete(timer);
          answer();
        }, response.delayMs);
        timers.add(timer);
        res.on("close", () => {
          clearTimeout(timer);
          timers.delete(timer);
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
