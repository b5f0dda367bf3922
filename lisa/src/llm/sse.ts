// Server-sent events as chat-completions servers stream them: the `data:`
// payload of each event, whatever the line endings (llama-server writes LF,
// llama-cpp-python's sse-starlette CRLF), comment lines (sse-starlette's
// `: ping` keep-alives) skipped, multi-line data joined with LF. Bounded: one
// event's text may not exceed the cap (a stream that never ends an event is a
// protocol error, not a memory leak).

/** One decoded step: the data payloads that completed, or an oversized event. */
export type SseStep = { readonly ok: true; readonly data: readonly string[] } | { readonly ok: false };

/** Incremental SSE decoder: `push` text as it arrives, read completed `data` payloads. */
export class SseDecoder {
  readonly #maxEventChars: number;
  #pending = "";
  #data: string[] = [];

  constructor(maxEventChars: number) {
    this.#maxEventChars = maxEventChars;
  }

  /** Feeds decoded text; returns the payloads of every event that ended in it. */
  push(text: string): SseStep {
    const buffer = this.#pending + text;
    const out: string[] = [];
    // Line ends found by indexOf (one pass per kind, no regex per line; CR is absent from most streams).
    let start = 0;
    let lf = buffer.indexOf("\n");
    let cr = buffer.indexOf("\r");
    for (;;) {
      if (lf >= 0 && lf < start) lf = buffer.indexOf("\n", start);
      if (cr >= 0 && cr < start) cr = buffer.indexOf("\r", start);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      // A lone CR at the very end may be the first half of CRLF: wait for more.
      if (end === cr && cr === buffer.length - 1) break;
      this.#line(buffer.slice(start, end), out);
      start = end === cr && lf === cr + 1 ? cr + 2 : end + 1;
    }
    this.#pending = start === 0 ? buffer : buffer.slice(start);
    const held = this.#pending.length + this.#data.reduce((sum, part) => sum + part.length, 0);
    if (held > this.#maxEventChars) return { ok: false };
    return { ok: true, data: out };
  }

  /** Ends the stream: an event without its closing blank line still counts. */
  end(): readonly string[] {
    const out: string[] = [];
    if (this.#pending !== "") this.#line(this.#pending, out);
    this.#pending = "";
    this.#line("", out);
    return out;
  }

  #line(line: string, out: string[]): void {
    if (line === "") {
      if (this.#data.length > 0) out.push(this.#data.join("\n"));
      this.#data = [];
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== "data") return;
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    this.#data.push(value);
  }
}
