// TEST STAND-IN, not a model: a scripted fake of the OpenAI Responses API
// wire format (POST /v1/responses, server-sent events; plan appendix A) on
// 127.0.0.1. It drives the REAL Codex (through the real codex-acp) with
// replies a test scripts in advance, and records every request Codex makes.
// It never ships and is never described as the real model service.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted model reply, consumed in order, one per POST /v1/responses. */
export type ScriptedReply =
  /** An assistant message streamed as these text deltas (chunk boundaries kept), `gapMs` apart when given; `usage` replaces the default usage report. */
  | { text: readonly string[]; gapMs?: number; usage?: ResponsesUsage }
  /**
   * A reasoning item streamed as these deltas (`response.reasoning_text.delta` with `content_index`, or with
   * `summary: true` `response.reasoning_summary_text.delta` with `summary_index`, as the Responses API
   * defines them), then an assistant message streamed as `answer`; every event `gapMs` apart when given.
   */
  | { reasoning: readonly string[]; summary?: boolean; answer: readonly string[]; gapMs?: number }
  /** A function call, e.g. Codex's `exec_command`, with its JSON arguments. */
  | { call: { name: string; arguments: Record<string, unknown>; callId?: string; namespace?: string } }
  /** Opens the stream, sends `response.created`, then never finishes (until the client goes). */
  | { stall: true }
  /** Answers with an HTTP error whose body carries `message` (a provider error). */
  | { fail: { status: number; message: string } };

/** A running scripted model server. */
export type ScriptedResponsesApi = {
  /** Base URL for a Codex model provider, ending in /v1. */
  readonly baseUrl: string;
  /** Parsed JSON bodies of the agent-turn requests (those offering tools), in order. */
  readonly requests: Record<string, unknown>[];
  /** Side requests without tools (Codex's thread-title generation), answered outside the script. */
  readonly sideRequests: Record<string, unknown>[];
  /** Requests whose stream was stalled and then closed by the client. */
  readonly abandoned: number;
  /** Appends replies to the script. */
  push(...replies: ScriptedReply[]): void;
  /** Resolves once `n` requests have arrived (deadline in ms). */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

/** What the server answers once the script runs out. */
const FALLBACK: ScriptedReply = { text: ["(script exhausted)"] };
/** The fixed answer to side requests, which must not consume the script. */
const SIDE_REPLY: ScriptedReply = { text: ["Scripted title"] };
const MAX_BODY = 8 * 1024 * 1024;

function sse(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

/** The Responses API's usage object, as `response.completed` carries it. */
export type ResponsesUsage = { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number; output_tokens_details: { reasoning_tokens: number }; total_tokens: number };

const USAGE: ResponsesUsage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };

function stream(res: ServerResponse, n: number, reply: ScriptedReply, onAbandon: () => void): void {
  if ("fail" in reply) {
    res.writeHead(reply.fail.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: reply.fail.message, type: "invalid_request_error", code: "scripted_failure" } }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const id = `resp_scripted_${n}`;
  sse(res, "response.created", { response: { id, object: "response", status: "in_progress", output: [] } });
  if ("stall" in reply) {
    res.once("close", onAbandon);
    return;
  }
  if ("reasoning" in reply) {
    paced(res, reasoningFrames(n, id, reply), reply.gapMs ?? 0);
    return;
  }
  let item: Record<string, unknown>;
  if ("text" in reply && (reply.gapMs ?? 0) > 0) {
    const itemId = `msg_scripted_${n}`;
    sse(res, "response.output_item.added", { output_index: 0, item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] } });
    const deltas = [...reply.text];
    const next = () => {
      if (res.destroyed) return;
      const delta = deltas.shift();
      if (delta !== undefined) {
        sse(res, "response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta });
        setTimeout(next, reply.gapMs);
        return;
      }
      const done = { id: itemId, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text.join(""), annotations: [] }] };
      sse(res, "response.output_item.done", { output_index: 0, item: done });
      sse(res, "response.completed", { response: { id, object: "response", status: "completed", output: [done], usage: reply.usage ?? USAGE } });
      res.end();
    };
    next();
    return;
  }
  if ("text" in reply) {
    const itemId = `msg_scripted_${n}`;
    sse(res, "response.output_item.added", { output_index: 0, item: { id: itemId, type: "message", role: "assistant", status: "in_progress", content: [] } });
    for (const delta of reply.text) sse(res, "response.output_text.delta", { item_id: itemId, output_index: 0, content_index: 0, delta });
    item = { id: itemId, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text.join(""), annotations: [] }] };
  } else {
    item = { id: `fc_scripted_${n}`, type: "function_call", status: "completed", call_id: reply.call.callId ?? `call_scripted_${n}`, name: reply.call.name, ...(reply.call.namespace === undefined ? {} : { namespace: reply.call.namespace }), arguments: JSON.stringify(reply.call.arguments) };
    sse(res, "response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", arguments: "" } });
  }
  sse(res, "response.output_item.done", { output_index: 0, item });
  sse(res, "response.completed", { response: { id, object: "response", status: "completed", output: [item], usage: "text" in reply ? reply.usage ?? USAGE : USAGE } });
  res.end();
}

type Frame = readonly [string, Record<string, unknown>];

/** The events of a reasoning reply: the reasoning item (output 0), then the message (output 1), then completion. */
function reasoningFrames(n: number, id: string, reply: { reasoning: readonly string[]; summary?: boolean; answer: readonly string[] }): Frame[] {
  const rsId = `rs_scripted_${n}`;
  const msgId = `msg_scripted_${n}`;
  const thought = reply.reasoning.join("");
  const summary = reply.summary === true;
  const rsItem = { id: rsId, type: "reasoning", summary: summary ? [{ type: "summary_text", text: thought }] : [], content: summary ? [] : [{ type: "reasoning_text", text: thought }] };
  const msg = { id: msgId, type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.answer.join(""), annotations: [] }] };
  return [
    ["response.output_item.added", { output_index: 0, item: { id: rsId, type: "reasoning", summary: [], content: [] } }],
    ...(summary ? [["response.reasoning_summary_part.added", { item_id: rsId, output_index: 0, summary_index: 0, part: { type: "summary_text", text: "" } }] as const] : []),
    ...reply.reasoning.map((delta): Frame => summary
      ? ["response.reasoning_summary_text.delta", { item_id: rsId, output_index: 0, summary_index: 0, delta }]
      : ["response.reasoning_text.delta", { item_id: rsId, output_index: 0, content_index: 0, delta }]),
    ["response.output_item.done", { output_index: 0, item: rsItem }],
    ["response.output_item.added", { output_index: 1, item: { id: msgId, type: "message", role: "assistant", status: "in_progress", content: [] } }],
    ...reply.answer.map((delta): Frame => ["response.output_text.delta", { item_id: msgId, output_index: 1, content_index: 0, delta }]),
    ["response.output_item.done", { output_index: 1, item: msg }],
    ["response.completed", { response: { id, object: "response", status: "completed", output: [rsItem, msg], usage: USAGE } }],
  ];
}

/** Writes the frames `gapMs` apart (at once when 0), then ends the response. */
function paced(res: ServerResponse, frames: Frame[], gapMs: number): void {
  const next = (i: number) => {
    if (res.destroyed) return;
    const f = frames[i];
    if (f === undefined) { res.end(); return; }
    sse(res, f[0], f[1]);
    if (gapMs > 0) setTimeout(() => next(i + 1), gapMs);
    else next(i + 1);
  };
  next(0);
}

/** Options of the scripted server (benchmarks use them; tests mostly need none). */
export type ScriptedServerOptions = {
  /** A fixed delay before each agent-turn reply starts streaming (a model's thinking time). */
  readonly replyDelayMs?: number;
  /** Called when an agent-turn request has arrived, before its reply (e.g. to timestamp it). */
  readonly onRequest?: (body: Record<string, unknown>) => void;
};

/** Starts the scripted server on 127.0.0.1 with an ephemeral port. */
export async function startScriptedResponsesApi(script: ScriptedReply[] = [], options: ScriptedServerOptions = {}): Promise<ScriptedResponsesApi> {
  const queue = [...script];
  const requests: Record<string, unknown>[] = [];
  const sideRequests: Record<string, unknown>[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let abandoned = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/responses")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not scripted" } }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (b: Buffer) => { size += b.length; if (size <= MAX_BODY) chunks.push(b); });
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      try { body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>; } catch { /* recorded empty */ }
      if (!Array.isArray(body.tools)) {
        sideRequests.push(body);
        stream(res, 1_000 + sideRequests.length, SIDE_REPLY, () => {});
        return;
      }
      requests.push(body);
      options.onRequest?.(body);
      for (const w of waiters.filter((x) => requests.length >= x.n)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(); }
      const n = requests.length;
      const reply = queue.shift() ?? FALLBACK;
      const delay = options.replyDelayMs ?? 0;
      if (delay <= 0) stream(res, n, reply, () => { abandoned += 1; });
      else setTimeout(() => { if (!res.destroyed) stream(res, n, reply, () => { abandoned += 1; }); }, delay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    sideRequests,
    get abandoned() { return abandoned; },
    push: (...replies) => { queue.push(...replies); },
    waitForRequests: (n, timeoutMs = 30_000) => new Promise<void>((resolve, reject) => {
      if (requests.length >= n) return resolve();
      const timer = setTimeout(() => reject(new Error(`scripted model: ${requests.length} of ${n} requests`)), timeoutMs);
      waiters.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
    }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
