import { randomBytes } from "node:crypto";
import { err, ok, type Result, type ToolExecutionError } from "../errors.ts";
import { toolFailure } from "./failures.ts";

/** What an artifact holds: downloaded HTML, downloaded plain text, or converted Markdown. */
export type ArtifactKind = "html" | "text" | "markdown";

const ID_PREFIX: Readonly<Record<ArtifactKind, string>> = { html: "html", text: "txt", markdown: "md" };
const ID_RANDOM_BYTES = 18;

interface ArtifactFields {
  /** Opaque random handle such as `html_K7F4t2...`. */
  readonly id: string;
  /** Media type without parameters, e.g. `text/html`. */
  readonly contentType: string;
  /** Character encoding of the content (`utf-8` for converted Markdown). */
  readonly charset: string;
  /** Normalised URL the content came from. */
  readonly sourceUrl: string;
  readonly title: string | null;
}

/** An artifact held as the bytes that were downloaded (any kind). */
export interface BytesArtifact extends ArtifactFields {
  readonly kind: ArtifactKind;
  readonly bytes: Uint8Array;
}

/** Converted Markdown held as the one string the conversion produced, so it is never copied into a buffer. */
export interface TextArtifact extends ArtifactFields {
  readonly kind: "markdown";
  readonly text: string;
}

/** One invocation-local artifact. */
export type Artifact = BytesArtifact | TextArtifact;

/** Fields of a new artifact; the store assigns its id. */
export type NewArtifact = Omit<BytesArtifact, "id"> | Omit<TextArtifact, "id">;

/** The artifact's size against the budget: its bytes, or its text's length in UTF-8 (counted without encoding it). */
function artifactBytes(fields: NewArtifact): number {
  return "bytes" in fields ? fields.bytes.byteLength : Buffer.byteLength(fields.text, "utf8");
}

/** In-memory artifacts of one invocation, with a total byte budget. */
export class ArtifactStore {
  readonly #artifacts = new Map<string, Artifact>();
  readonly #maxTotalBytes: number;
  #totalBytes = 0;

  constructor(maxTotalBytes: number) {
    this.#maxTotalBytes = maxTotalBytes;
  }

  /** Stores an artifact; `output_too_large` if it alone exceeds the budget, `invocation_limit` if the budget is used up. */
  add(fields: NewArtifact): Result<Artifact, ToolExecutionError> {
    const size = artifactBytes(fields);
    if (size > this.#maxTotalBytes) return err(toolFailure("output_too_large"));
    if (this.#totalBytes + size > this.#maxTotalBytes) return err(toolFailure("invocation_limit"));
    const id = `${ID_PREFIX[fields.kind]}_${randomBytes(ID_RANDOM_BYTES).toString("base64url")}`;
    const artifact: Artifact = { ...fields, id };
    this.#artifacts.set(id, artifact);
    this.#totalBytes += size;
    return ok(artifact);
  }

  /** The artifact with exactly this id, or null. */
  get(id: string): Artifact | null {
    return this.#artifacts.get(id) ?? null;
  }

  /** Bytes still available in this invocation's budget. */
  remainingBytes(): number {
    return this.#maxTotalBytes - this.#totalBytes;
  }

  /** Drops every artifact. */
  clear(): void {
    this.#artifacts.clear();
    this.#totalBytes = 0;
  }
}
