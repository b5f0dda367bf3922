// A response body read within bounds: an idle deadline between chunks, the
// caller's abort signal, a byte cap counted on the decoded bytes (so a small
// compressed body cannot expand past it) and on the raw bytes (so endless
// input that decodes to nothing cannot stream on), and gzip/deflate/brotli
// decoding through node:zlib when the client was asked to decode; an encoded
// body with no bytes at all is an empty body.
import type { Readable, Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { err, ok, type Result } from "../errors.ts";
import { HttpFailure } from "./failure.ts";

/** What a bounded read produced. */
export interface BodyBytes {
  readonly bytes: Buffer;
  /** True when the body was longer than the cap and only its first bytes are here (`readUpTo`). */
  readonly truncated: boolean;
}

/** How the body is to be bounded. */
export interface BodyLimits {
  /** Idle time allowed between two chunks, in ms. */
  readonly idleMs: number;
  /** Cap on the decoded bytes, and on the raw bytes, of every read (the per-read cap may be lower). */
  readonly maxBytes: number;
  /** Decode gzip, deflate and br; when false any non-identity encoding is passed through as is. */
  readonly decompress: boolean;
}

const noop = (): void => undefined;
const EMPTY = Buffer.alloc(0);

/** Where a body comes from besides its bytes. */
export interface BodyInit {
  readonly limits: BodyLimits;
  /** The response's Content-Encoding header. */
  readonly contentEncoding?: string | undefined;
  /** Ends a read in progress with `http_aborted`. */
  readonly signal?: AbortSignal | undefined;
  /** Called once the body is finished with (read, failed or discarded). */
  readonly release?: () => void;
}

function encodings(raw: string | undefined): string[] {
  if (raw === undefined) return [];
  return raw.split(",").map((v) => v.trim().toLowerCase()).filter((v) => v !== "" && v !== "identity");
}

function decoder(encoding: string): Transform | null {
  if (encoding === "gzip" || encoding === "x-gzip") return createGunzip();
  if (encoding === "deflate") return createInflate();
  if (encoding === "br") return createBrotliDecompress();
  return null;
}

/** One response body; read it once (`read`, `readUpTo`) or `discard` it. */
export class ResponseBody {
  readonly #response: Readable;
  readonly #limits: BodyLimits;
  readonly #encoding: string | undefined;
  readonly #signal: AbortSignal | undefined;
  readonly #release: () => void;
  #used = false;

  constructor(response: Readable, init: BodyInit) {
    this.#response = response;
    this.#limits = init.limits;
    this.#encoding = init.contentEncoding;
    this.#signal = init.signal;
    this.#release = init.release ?? noop;
    // An error after the caller stopped listening must never be unhandled.
    response.on("error", noop);
  }

  /** The whole body; `http_body_too_large` as soon as it crosses `maxBytes` (the rest is never read). */
  async read(maxBytes: number): Promise<Result<Buffer, HttpFailure>> {
    const result = await this.#collect(maxBytes, false);
    return result.ok ? ok(result.value.bytes) : result;
  }

  /** The body as UTF-8 text, bounded like `read`. */
  async text(maxBytes: number): Promise<Result<string, HttpFailure>> {
    const result = await this.read(maxBytes);
    return result.ok ? ok(result.value.toString("utf8")) : result;
  }

  /** At most `maxBytes` of the body; a longer body is cut there and `truncated`. */
  async readUpTo(maxBytes: number): Promise<Result<BodyBytes, HttpFailure>> {
    return this.#collect(maxBytes, true);
  }

  /**
   * Streams the body to `sink` chunk by chunk (decoded), within `maxBytes` in
   * total and `idleMs` between chunks (the client's idle deadline when
   * omitted); `sink` returning false stops the read early (the connection is
   * closed). Resolves once the body ended or was stopped.
   */
  async each(maxBytes: number, sink: (chunk: Buffer) => boolean, idleMs?: number): Promise<Result<void, HttpFailure>> {
    const result = await this.#collect(maxBytes, false, { sink, idleMs: idleMs ?? this.#limits.idleMs });
    return result.ok ? ok(undefined) : result;
  }

  /** Abandons the body without reading it (the connection is closed, not reused). */
  discard(): void {
    this.#used = true;
    this.#response.destroy();
    this.#release();
  }

  #collect(
    maxBytes: number, truncate: boolean, streaming?: { readonly sink: (chunk: Buffer) => boolean; readonly idleMs: number },
  ): Promise<Result<BodyBytes, HttpFailure>> {
    if (this.#used) throw new Error("response body read twice");
    this.#used = true;
    const cap = Math.min(maxBytes, this.#limits.maxBytes);
    const raw = this.#response;
    const codings = this.#limits.decompress ? encodings(this.#encoding) : [];
    const decoded = codings.length === 1 ? decoder(codings[0] ?? "") : null;
    if (codings.length > 0 && decoded === null) {
      this.discard();
      return Promise.resolve(err(new HttpFailure("http_unsupported_encoding")));
    }
    const stream: Readable = decoded === null ? raw : raw.pipe(decoded);
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let total = 0;
      let idle: NodeJS.Timeout | undefined;
      let done = false;
      let ended = false;
      const finish = (result: Result<BodyBytes, HttpFailure>, complete: boolean): void => {
        if (done) return;
        done = true;
        clearTimeout(idle);
        this.#signal?.removeEventListener("abort", onAbort);
        if (!complete) {
          raw.destroy();
          decoded?.destroy();
        }
        this.#release();
        resolve(result);
      };
      const fail = (failure: HttpFailure): void => finish(err(failure), false);
      // The idle deadline is re-armed lazily: a chunk only notes when it came, and the
      // one timer, when it fires, waits out the rest of the silence or fails. A
      // clear-and-set per chunk cost a timer-list insertion for every streamed token.
      const idleMs = streaming?.idleMs ?? this.#limits.idleMs;
      let lastDataAt = performance.now();
      const expire = (): void => {
        const quiet = performance.now() - lastDataAt;
        if (quiet >= idleMs) return fail(new HttpFailure("http_body_timeout"));
        idle = setTimeout(expire, Math.max(1, Math.ceil(idleMs - quiet)));
      };
      const arm = (): void => {
        lastDataAt = performance.now();
        idle ??= setTimeout(expire, idleMs);
      };
      const onAbort = (): void => fail(new HttpFailure("http_aborted", this.#signal?.reason));
      if (this.#signal?.aborted === true) return onAbort();
      this.#signal?.addEventListener("abort", onAbort, { once: true });
      const whatWasDecoded = (): BodyBytes => ({ bytes: Buffer.concat(chunks, total), truncated: true });
      if (decoded !== null) {
        // The raw stream's data also proves the peer is alive, and the raw bytes are capped
        // too: encoded input that decodes to little (empty gzip members) must not stream on.
        let rawTotal = 0;
        raw.on("data", (chunk: Buffer) => {
          arm();
          rawTotal += chunk.length;
          if (rawTotal <= cap) return;
          if (!truncate) return fail(new HttpFailure("http_body_too_large"));
          finish(ok(whatWasDecoded()), false);
        });
        decoded.on("error", (error: Error) => {
          // No encoded byte at all (a 204, a Content-Length of 0): an empty body, not a broken stream.
          if (rawTotal === 0) return finish(ok({ bytes: Buffer.alloc(0), truncated: false }), ended);
          fail(new HttpFailure("http_network", error));
        });
      }
      stream.on("data", (chunk: Buffer) => {
        arm();
        if (total + chunk.length > cap) {
          if (!truncate) return fail(new HttpFailure("http_body_too_large"));
          chunks.push(chunk.subarray(0, cap - total));
          return finish(ok({ bytes: Buffer.concat(chunks, cap), truncated: true }), false);
        }
        total += chunk.length;
        if (streaming === undefined) chunks.push(chunk);
        // A streamed body keeps no bytes; a stop is a complete read of what was wanted.
        else if (!streaming.sink(chunk)) finish(ok({ bytes: EMPTY, truncated: false }), false);
      });
      raw.on("end", () => {
        ended = true;
      });
      stream.on("end", () => finish(ok({ bytes: streaming === undefined ? Buffer.concat(chunks, total) : EMPTY, truncated: false }), true));
      raw.on("error", (error: Error) => fail(new HttpFailure("http_network", error)));
      raw.on("close", () => {
        // Closed before its end: the connection died mid-body (a lying Content-Length, a reset).
        if (!ended) fail(new HttpFailure("http_network", Object.assign(new Error("response closed before its end"), { code: "ECONNRESET" })));
      });
      arm();
    });
  }
}
