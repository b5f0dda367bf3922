// An embedding provider over an OpenAI-compatible `POST /v1/embeddings`
// (llama-server started with `--embeddings`, Ollama, a hosted API). The API
// key is only ever an `env:NAME` reference, resolved when the provider is
// made; it travels in the Authorization header and nowhere else: every
// failure is the payload-free code `embedding_failed`. Every request has a
// deadline, and a response is read up to a byte bound.
import { memoryErr, memoryOk, type EmbeddingProvider, type MemoryResult } from "./ports.ts";

/** How to reach the embeddings endpoint. */
export type OpenAiEmbeddingOptions = {
  /** The API base, e.g. `http://127.0.0.1:8080/v1` (the provider posts to `<baseUrl>/embeddings`). */
  readonly baseUrl: string;
  readonly model: string;
  /** The vector length the model answers; an answer of another length fails. */
  readonly dims: number;
  /** `env:NAME`: the variable holding the API key (never the key itself). */
  readonly apiKey?: string;
  /** Reads an environment variable (default: the process environment). */
  readonly env?: (name: string) => string | undefined;
  /** Deadline of one request (default 30 s, cap 600 s). */
  readonly timeoutMs?: number;
  /** Texts per request; longer lists are sent in order, in several requests (default 64, cap 2048). */
  readonly maxBatch?: number;
  /** Bytes one response may have (default 64 MiB, cap 512 MiB). */
  readonly maxResponseBytes?: number;
  /** The provider id stored beside its vectors (default `openai-compatible:<model>:<dims>`). */
  readonly id?: string;
  readonly fetch?: typeof fetch;
};

/** Why the options cannot make a provider (the failing field; never its value). */
export type EmbeddingConfigError = { readonly ok: false; readonly error: { readonly code: "embedding_config_invalid"; readonly field: string; readonly retryable: false } };

const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]{0,127})$/;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
const LIMITS = {
  timeoutMs: { fallback: 30_000, cap: 600_000 },
  maxBatch: { fallback: 64, cap: 2_048 },
  maxResponseBytes: { fallback: 64 * 1024 * 1024, cap: 512 * 1024 * 1024 },
  dims: { fallback: 0, cap: 65_536 },
} as const;

const bad = (field: string): EmbeddingConfigError => ({ ok: false, error: { code: "embedding_config_invalid", field, retryable: false } });

function limit(options: OpenAiEmbeddingOptions, key: keyof typeof LIMITS): number | null {
  const v = options[key] ?? LIMITS[key].fallback;
  return typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= LIMITS[key].cap ? v : null;
}

function defaultEnv(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name];
}

/** Reads a response body up to `max` bytes; null when it is longer or unreadable. */
async function boundedText(response: Response, max: number): Promise<string | null> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > max || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    return declared > max ? null : "";
  }
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder("utf-8", { fatal: false }).decode(all);
}

/** The vectors of an answer, in input order; null when its shape is wrong. */
function vectorsOf(body: string, count: number, dims: number): Float32Array[] | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const data = (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== count) return null;
  const out: (Float32Array | undefined)[] = new Array(count);
  for (const [position, item] of data.entries()) {
    const entry = item as { index?: unknown; embedding?: unknown } | null;
    const index = typeof entry?.index === "number" ? entry.index : position;
    const embedding = entry?.embedding;
    if (!Number.isInteger(index) || index < 0 || index >= count || out[index] !== undefined) return null;
    if (!Array.isArray(embedding) || embedding.length !== dims || !embedding.every((x) => typeof x === "number" && Number.isFinite(x))) return null;
    out[index] = Float32Array.from(embedding as number[]);
  }
  return out as Float32Array[];
}

/** Makes the provider, or says which option is wrong. An API key is refused over plain HTTP to a non-loopback host. */
export function openAiEmbeddingProvider(options: OpenAiEmbeddingOptions): { ok: true; value: EmbeddingProvider } | EmbeddingConfigError {
  let url: URL;
  try {
    url = new URL(`${options.baseUrl.replace(/\/+$/, "")}/embeddings`);
  } catch {
    return bad("baseUrl");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return bad("baseUrl");
  if (url.username !== "" || url.password !== "") return bad("baseUrl");
  if (typeof options.model !== "string" || options.model === "" || options.model.length > 200) return bad("model");
  const dims = limit(options, "dims");
  const timeoutMs = limit(options, "timeoutMs");
  const maxBatch = limit(options, "maxBatch");
  const maxBytes = limit(options, "maxResponseBytes");
  if (dims === null) return bad("dims");
  if (timeoutMs === null) return bad("timeoutMs");
  if (maxBatch === null) return bad("maxBatch");
  if (maxBytes === null) return bad("maxResponseBytes");
  let key: string | null = null;
  if (options.apiKey !== undefined) {
    const ref = ENV_REF.exec(options.apiKey);
    if (ref === null) return bad("apiKey");
    const value = (options.env ?? defaultEnv)(ref[1] as string);
    if (value === undefined || value === "" || /[\r\n]/.test(value)) return bad("apiKey");
    if (url.protocol === "http:" && !LOOPBACK.has(url.hostname)) return bad("apiKey");
    key = value;
  }
  const doFetch = options.fetch ?? fetch;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const id = options.id ?? `openai-compatible:${options.model}:${dims}`;

  const request = async (texts: readonly string[], signal: AbortSignal): Promise<MemoryResult<Float32Array[]>> => {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    let response: Response;
    try {
      response = await doFetch(url, { method: "POST", headers, body: JSON.stringify({ model: options.model, input: texts, encoding_format: "float" }), signal: deadline, redirect: "error" });
    } catch {
      return memoryErr("embedding_failed", !signal.aborted);
    }
    try {
      const body = await boundedText(response, maxBytes);
      if (!response.ok) return memoryErr("embedding_failed", response.status === 429 || response.status >= 500);
      const vectors = body === null ? null : vectorsOf(body, texts.length, dims);
      return vectors === null ? memoryErr("embedding_failed") : memoryOk(vectors);
    } catch {
      return memoryErr("embedding_failed", !signal.aborted);
    }
  };

  return {
    ok: true,
    value: {
      id,
      dims,
      async embed(texts, signal) {
        if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) return memoryErr("embedding_failed");
        const out: Float32Array[] = [];
        for (let at = 0; at < texts.length; at += maxBatch) {
          if (signal.aborted) return memoryErr("embedding_failed");
          const part = await request(texts.slice(at, at + maxBatch), signal);
          if (!part.ok) return part;
          out.push(...part.value);
        }
        return memoryOk(out);
      },
    },
  };
}
