// The pinned native embedding provider: all-MiniLM-L6-v2 (384 dimensions)
// run in-process by onnxruntime-node over the graph built from the pinned
// weights. Opt-in: the runtime is an optional peer dependency, loaded only
// when a provider is created, and the model costs about 220 MB of resident
// memory. Nothing is downloaded at run time; the weights come from
// scripts/embeddings/install.sh. On Deno the runtime needs --allow-ffi.

import { memoryErr, memoryOk, type EmbeddingProvider, type MemoryResult } from "../ports.ts";
import { loadModelFiles, NATIVE_MODEL, type ModelFilesError } from "./model-files.ts";
import { encode, parseVocab, type WordPieceVocab } from "./wordpiece.ts";

/** Limits and knobs of the native provider; each has a default and a cap. */
export type NativeEmbeddingOptions = {
  /** The folder install.sh unpacked the model into (`install.sh --print dir`). */
  readonly modelDir: string;
  /** Tokens per text including [CLS] and [SEP]; longer texts are truncated. Default 256 (what the model was trained with), 8..512. */
  readonly maxTokens?: number;
  /** Texts per inference run. Default 16, 1..128. */
  readonly maxBatch?: number;
  /** Texts per `embed` call; more is `memory_limit_exceeded`. Default 1024, 1..65536. */
  readonly maxTexts?: number;
  /** Threads of one inference run. Default 1 (the provider shares the machine), 1..16. */
  readonly threads?: number;
  /** Write the built graph beside the weights for later starts. Default true. */
  readonly cacheGraph?: boolean;
};

export const NATIVE_LIMITS = {
  maxTokens: { default: 256, min: 8, max: 512 },
  maxBatch: { default: 16, min: 1, max: 128 },
  maxTexts: { default: 1024, min: 1, max: 65536 },
  threads: { default: 1, min: 1, max: 16 },
} as const;

/** Why a provider could not be created (payload-free but for the file or option it concerns). */
export type NativeEmbeddingError =
  | ModelFilesError
  | { readonly code: "native_runtime_unavailable"; readonly retryable: false }
  | { readonly code: "native_session_failed"; readonly retryable: false }
  | { readonly code: "native_options_invalid"; readonly retryable: false; readonly option: string };

/** An embedding provider holding a native session; `close` releases it (later calls answer `embedding_failed`). */
export interface NativeEmbeddingProvider extends EmbeddingProvider {
  close(): Promise<void>;
}

// The slice of onnxruntime-node's API the provider uses (the package's own types are not needed at compile time).
type OrtTensor = { readonly data: unknown; readonly dims: readonly number[] };
type OrtSession = { run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>; release(): Promise<void> };
type OrtModule = {
  Tensor: new (type: "int64", data: BigInt64Array, dims: number[]) => OrtTensor;
  InferenceSession: { create(model: string | Uint8Array, options: Record<string, unknown>): Promise<OrtSession> };
};

async function loadRuntime(): Promise<OrtModule | null> {
  try {
    const loaded = (await import("onnxruntime-node")) as unknown as { default?: OrtModule } & Partial<OrtModule>;
    const ort = loaded.InferenceSession !== undefined ? (loaded as OrtModule) : loaded.default;
    return ort?.InferenceSession !== undefined && ort.Tensor !== undefined ? ort : null;
  } catch {
    // Not installed, or (Deno) loading a native addon without --allow-ffi.
    return null;
  }
}

function option(value: number | undefined, name: keyof typeof NATIVE_LIMITS): number | null {
  const limit = NATIVE_LIMITS[name];
  const v = value ?? limit.default;
  return Number.isInteger(v) && v >= limit.min && v <= limit.max ? v : null;
}

type Settings = { maxTokens: number; maxBatch: number; maxTexts: number; threads: number };

function settings(options: NativeEmbeddingOptions): Settings | { invalid: string } {
  const out: Partial<Settings> = {};
  for (const name of Object.keys(NATIVE_LIMITS) as (keyof typeof NATIVE_LIMITS)[]) {
    const v = option(options[name], name);
    if (v === null) return { invalid: name };
    out[name] = v;
  }
  return out as Settings;
}

/**
 * Creates the native provider: checks the model files against their pins,
 * builds (or reuses) the graph and opens an inference session.
 */
export async function createNativeEmbeddingProvider(
  options: NativeEmbeddingOptions,
): Promise<{ ok: true; value: NativeEmbeddingProvider } | { ok: false; error: NativeEmbeddingError }> {
  const s = settings(options);
  if ("invalid" in s) return { ok: false, error: { code: "native_options_invalid", retryable: false, option: s.invalid } };
  const ort = await loadRuntime();
  if (ort === null) return { ok: false, error: { code: "native_runtime_unavailable", retryable: false } };
  const files = await loadModelFiles(options.modelDir, options.cacheGraph ?? true);
  if (!files.ok) return files;
  const vocab = parseVocab(files.value.vocab);
  if (vocab === null) return { ok: false, error: { code: "native_model_invalid", retryable: false, file: NATIVE_MODEL.vocab.file } };
  const graph = files.value.graph;
  let session: OrtSession;
  try {
    session = await ort.InferenceSession.create("path" in graph ? graph.path : graph.bytes, {
      executionProviders: ["cpu"],
      intraOpNumThreads: s.threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
      logSeverityLevel: 3,
    });
  } catch {
    return { ok: false, error: { code: "native_session_failed", retryable: false } };
  }
  return { ok: true, value: nativeProvider(ort, session, vocab, s) };
}

function nativeProvider(ort: OrtModule, session: OrtSession, vocab: WordPieceVocab, s: Settings): NativeEmbeddingProvider {
  let closed = false;
  // One run at a time: a second caller waits instead of doubling the working memory.
  let queue: Promise<unknown> = Promise.resolve();
  const int64 = (values: number[], rows: number, cols: number): OrtTensor => new ort.Tensor("int64", BigInt64Array.from(values, BigInt), [rows, cols]);

  const runBatch = async (batch: number[][]): Promise<Float32Array[] | null> => {
    const cols = Math.max(...batch.map((ids) => ids.length));
    const ids: number[] = [];
    const mask: number[] = [];
    const positions: number[] = [];
    for (const row of batch) {
      for (let i = 0; i < cols; i++) {
        ids.push(row[i] ?? vocab.pad);
        mask.push(i < row.length ? 1 : 0);
        positions.push(i);
      }
    }
    const out = await session.run({
      input_ids: int64(ids, batch.length, cols),
      attention_mask: int64(mask, batch.length, cols),
      position_ids: int64(positions, batch.length, cols),
    });
    const data = out["embedding"]?.data;
    if (!(data instanceof Float32Array) || data.length !== batch.length * NATIVE_MODEL.dims) return null;
    return batch.map((_, r) => data.slice(r * NATIVE_MODEL.dims, (r + 1) * NATIVE_MODEL.dims));
  };

  const embedAll = async (texts: readonly string[], signal: AbortSignal): Promise<MemoryResult<Float32Array[]>> => {
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += s.maxBatch) {
      if (closed) return memoryErr("embedding_failed");
      if (signal.aborted) return memoryErr("embedding_failed", true);
      const batch = texts.slice(start, start + s.maxBatch).map((text) => encode(text, vocab, s.maxTokens).ids);
      let rows: Float32Array[] | null;
      try {
        rows = await runBatch(batch);
      } catch {
        return memoryErr("embedding_failed", true);
      }
      if (rows === null) return memoryErr("embedding_failed");
      vectors.push(...rows);
    }
    return memoryOk(vectors);
  };

  return {
    id: `native:${NATIVE_MODEL.name}@${NATIVE_MODEL.graph.sha256.slice(0, 12)}/${s.maxTokens}`,
    dims: NATIVE_MODEL.dims,
    embed(texts, signal) {
      if (texts.length > s.maxTexts) return Promise.resolve(memoryErr("memory_limit_exceeded"));
      if (texts.some((t) => typeof t !== "string")) return Promise.resolve(memoryErr("embedding_failed"));
      const run = queue.then(() => (closed ? memoryErr("embedding_failed") : embedAll(texts, signal)));
      queue = run.catch(() => undefined);
      // The caller's signal is its deadline: an abort answers at once, even while waiting for the queue.
      return untilAborted(run, signal);
    },
    async close() {
      if (closed) return;
      closed = true;
      await queue;
      await session.release().catch(() => undefined);
    },
  };
}

/** `work`, or `embedding_failed` (retryable) as soon as `signal` aborts, whichever comes first. */
function untilAborted(work: Promise<MemoryResult<Float32Array[]>>, signal: AbortSignal): Promise<MemoryResult<Float32Array[]>> {
  const aborted = memoryErr("embedding_failed", true);
  if (signal.aborted) return Promise.resolve(aborted);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(aborted);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
