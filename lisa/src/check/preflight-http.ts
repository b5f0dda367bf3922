// One bounded HTTP exchange for the LLM and search probes: its own undici
// Agent per probe (no shared credentials), no redirects followed, the body
// read up to a cap, and every failure classified instead of thrown.

import { Agent } from "undici";
import type { ProbeContext } from "./preflight-result.ts";

/** How one probe request ended. */
export type HttpOutcome =
  | {
    readonly kind: "response";
    readonly status: number;
    /** The `Location` header of a redirect, if any. */
    readonly location: string | null;
    /** The body (UTF-8), at most the requested cap; `truncated` when more was sent. */
    readonly body: string;
    readonly truncated: boolean;
  }
  | { readonly kind: "network"; readonly code: string }
  | { readonly kind: "timeout" }
  | { readonly kind: "aborted" };

/** One probe request. */
export interface HttpProbeRequest {
  readonly method: "GET" | "POST";
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly maxBodyBytes: number;
}

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

/** A dedicated agent for one probe: one connection, every phase bounded by the probe's budget. */
export function probeAgent(timeoutMs: number): Agent {
  return new Agent({
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 1,
    pipelining: 0,
  });
}

type Body = AsyncIterable<Uint8Array> & { destroy(): unknown; on(event: "error", listener: () => void): unknown };

async function readUpTo(body: Body, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = maxBytes - size;
    if (chunk.byteLength > room) {
      chunks.push(Buffer.from(chunk.subarray(0, room)));
      body.on("error", () => undefined); // destroying an unread undici body emits an abort error
      body.destroy();
      return { text: Buffer.concat(chunks).toString("utf8"), truncated: true };
    }
    size += chunk.byteLength;
    chunks.push(Buffer.from(chunk));
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated: false };
}

function firstHeader(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** Sends one request through `agent`; never throws for network failures, timeouts or aborts. */
export async function httpProbe(agent: Agent, request: HttpProbeRequest, context: ProbeContext): Promise<HttpOutcome> {
  try {
    const response = await agent.request({
      origin: request.url.origin,
      path: `${request.url.pathname}${request.url.search}`,
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: context.signal,
    });
    const { text, truncated } = await readUpTo(response.body, request.maxBodyBytes);
    return { kind: "response", status: response.statusCode, location: firstHeader(response.headers["location"]), body: text, truncated };
  } catch (error) {
    if (context.timedOut()) return { kind: "timeout" };
    if (context.signal.aborted) return { kind: "aborted" };
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && TIMEOUT_CODES.has(code)) return { kind: "timeout" };
    return { kind: "network", code: typeof code === "string" ? code : "unknown" };
  }
}

/** `{base}/{leaf}`, tolerating a trailing slash on the base; the base's query is kept. */
export function joinUrl(base: string, leaf: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${leaf}`;
  return url;
}
