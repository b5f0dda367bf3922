// The pinned files of the native embedding model and the ONNX graph built
// from them. The weights and vocabulary are checked against their sha256
// before use; the graph is built once from the checked weights, must hash to
// its own pinned sha256 (the builder is deterministic), and is cached beside
// the weights with a `sha256sum -c` record, so later starts skip the build
// and never hold the weights in JavaScript memory.

import { createHash, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { buildBertGraph } from "./bert-graph.ts";

/** What the model folder must hold (scripts/embeddings/install.sh unpacks it), with the pins. */
export const NATIVE_MODEL = {
  name: "all-MiniLM-L6-v2",
  dims: 384,
  weights: { file: "model.safetensors", sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db" },
  vocab: { file: "vocab.txt", sha256: "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3" },
  graph: { file: "all-minilm-l6-v2.onnx", sha256: "f39f4a5754375b07c2948c2746383aadbb4f8f44981f0b46bbc231e2323239ed" },
} as const;

/** Why the model folder cannot be used; `file` names the file (never its content). */
export type ModelFilesError = {
  readonly code: "native_model_missing" | "native_model_mismatch" | "native_model_invalid";
  readonly retryable: false;
  readonly file: string;
};

/** The checked vocabulary text and where the graph is: a cached file, or bytes when the folder is read-only. */
export type ModelFiles = { readonly vocab: string; readonly graph: { readonly path: string } | { readonly bytes: Uint8Array } };

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The sha256 of a file read in 1 MiB chunks (the graph is 90 MB; it is never held whole). */
async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Uint8Array);
  return hash.digest("hex");
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function fail(code: ModelFilesError["code"], file: string): { ok: false; error: ModelFilesError } {
  return { ok: false, error: { code, retryable: false, file } };
}

async function readPinned(dir: string, pin: { file: string; sha256: string }): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; error: ModelFilesError }> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(join(dir, pin.file));
  } catch {
    return fail("native_model_missing", pin.file);
  }
  return sha256(bytes) === pin.sha256 ? { ok: true, bytes } : fail("native_model_mismatch", pin.file);
}

/**
 * Checks the model folder and answers the vocabulary and the graph: the
 * cached graph when it hashes to its pin, otherwise one built from the
 * checked weights (and cached when `cache` is set and the folder is writable).
 */
export async function loadModelFiles(dir: string, cache: boolean): Promise<{ ok: true; value: ModelFiles } | { ok: false; error: ModelFilesError }> {
  const vocab = await readPinned(dir, NATIVE_MODEL.vocab);
  if (!vocab.ok) return vocab;
  const vocabText = new TextDecoder().decode(vocab.bytes);
  const graphPath = join(dir, NATIVE_MODEL.graph.file);
  if ((await exists(graphPath)) && (await sha256File(graphPath)) === NATIVE_MODEL.graph.sha256) {
    return { ok: true, value: { vocab: vocabText, graph: { path: graphPath } } };
  }
  const weights = await readPinned(dir, NATIVE_MODEL.weights);
  if (!weights.ok) return weights;
  const built = buildBertGraph(weights.bytes);
  if (!built.ok) return fail("native_model_invalid", NATIVE_MODEL.weights.file);
  // Pinned weights through a deterministic builder: another hash means the builder changed without its pin.
  if (sha256(built.onnx) !== NATIVE_MODEL.graph.sha256) return fail("native_model_invalid", NATIVE_MODEL.graph.file);
  if (cache && (await cacheGraph(dir, built.onnx))) return { ok: true, value: { vocab: vocabText, graph: { path: graphPath } } };
  return { ok: true, value: { vocab: vocabText, graph: { bytes: built.onnx } } };
}

/** Writes the graph and its sha256 record atomically (temp file, then rename); false when the folder is not writable. */
async function cacheGraph(dir: string, onnx: Uint8Array): Promise<boolean> {
  const target = join(dir, NATIVE_MODEL.graph.file);
  const temp = `${target}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, onnx);
    await rename(temp, target);
    await writeFile(`${target}.sha256`, `${NATIVE_MODEL.graph.sha256}  ${NATIVE_MODEL.graph.file}\n`);
    return true;
  } catch {
    await rm(temp, { force: true }).catch(() => undefined);
    return false;
  }
}
