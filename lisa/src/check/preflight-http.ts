// One bounded HTTP exchange for the LLM and search probes: its own
// HttpClient per probe (no shared credentials), no redirects followed, the
// body read up to a cap, and every failure classified instead of thrown.

import { HttpClient } from "../http/client.ts";
import type { HttpFailure } from "../http/failure.ts";
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

// A probe's idle socket is not worth keeping: its client is closed right after.
const PROBE_KEEP_ALIVE_MS = 1_000;

/** A dedicated client for one probe: one connection, every phase bounded by the probe's budget. */
export function probeAgent(timeoutMs: number): HttpClient {
  return new HttpClient({
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: PROBE_KEEP_ALIVE_MS,
    connections: 1,
  });
}

function failedOutcome(failure: HttpFailure, context: ProbeContext): HttpOutcome {
  if (context.timedOut()) return { kind: "timeout" };
  if (context.signal.aborted) return { kind: "aborted" };
  if (failure.timedOut) return { kind: "timeout" };
  return { kind: "network", code: failure.causeCode ?? "unknown" };
}

/** Sends one request through `agent`; never throws for network failures, timeouts or aborts. */
export async function httpProbe(agent: HttpClient, request: HttpProbeRequest, context: ProbeContext): Promise<HttpOutcome> {
  const sent = await agent.request({
    url: request.url, method: request.method, headers: request.headers, signal: context.signal,
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  if (!sent.ok) return failedOutcome(sent.error, context);
  const response = sent.value;
  const read = await response.body.readUpTo(request.maxBodyBytes);
  if (!read.ok) return failedOutcome(read.error, context);
  const location = response.headers["location"];
  return { kind: "response", status: response.status, location: location ?? null, body: read.value.bytes.toString("utf8"), truncated: read.value.truncated };
}

/** `{base}/{leaf}`, tolerating a trailing slash on the base; the base's query is kept. */
export function joinUrl(base: string, leaf: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${leaf}`;
  return url;
}
