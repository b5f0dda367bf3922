import { randomBytes } from "node:crypto";
import { err, ok, type Result, type ToolExecutionError } from "../errors.ts";
import { toolFailure } from "./failures.ts";

/** What an artifact holds: downloaded HTML, downloaded plain text, or converted Markdown. */
export type ArtifactKind = "html" | "text" | "markdown";

const ID_PREFIX: Readonly<Record<ArtifactKind, string>> = { html: "html", text: "txt", markdown: "md" };
const ID_RANDOM_BYTES = 18;

/** One invocation-local artifact. */
export interface Artifact {
  /** Opaque random handle such as `html_K7F4t2...`. */
  readonly id: string;
  readonly kind: ArtifactKind;
  /** Media type without parameters, e.g. `text/html`. */
  readonly contentType: string;
  /** Character encoding of `bytes` (`utf-8` for converted Markdown). */
  readonly charset: string;
  readonly bytes: Uint8Array;
  /** Normalised URL the content came from. */
  readonly sourceUrl: string;
  readonly title: string | null;
}

/** Fields of a new artifact; the store assigns its id. */
export type NewArtifact = Omit<Artifact, "id">;

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
    const size = fields.bytes.byteLength;
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
