// Folds streamed chat-completion chunks (`chat.completion.chunk` deltas) into
// the one completion a non-streaming request would have returned, so the
// quirk normaliser and every check after it see the same shape either way.
// Tolerated: tool calls that arrive in pieces (id and name first, arguments
// in fragments), deltas without `index` (a new id starts a new call),
// arguments sent whole as an object, names repeated in every piece, role-only
// and usage-only chunks, `reasoning_content` (never read). A chunk carrying an
// `error` object (llama-server reports failures mid-stream so) ends the stream.

import { isRecord } from "./text.ts";

interface CallSlot {
  id: string;
  name: string;
  /** Fragments joined, or an object sent whole. */
  arguments: string | Record<string, unknown>;
}

/** What one chunk did. */
export type ChunkOutcome = "ok" | "error" | "invalid";

/** Accumulates one streamed completion. */
export class ChunkAccumulator {
  #content = "";
  #finish: string | null = null;
  readonly #calls: CallSlot[] = [];
  readonly #byIndex = new Map<number, CallSlot>();
  #legacy: { name: string; arguments: string } | null = null;

  /** The content text so far. */
  get content(): string {
    return this.#content;
  }

  /** True once a choice reported its finish reason. */
  get finished(): boolean {
    return this.#finish !== null;
  }

  /** Applies one parsed `data:` payload. */
  apply(chunk: unknown): ChunkOutcome {
    if (!isRecord(chunk)) return "invalid";
    if (chunk["error"] !== undefined && chunk["error"] !== null) return "error";
    const choices = chunk["choices"];
    if (choices === undefined || choices === null) return "ok";
    if (!Array.isArray(choices)) return "invalid";
    const choice: unknown = choices.find((c) => isRecord(c) && (c["index"] === undefined || c["index"] === 0));
    if (choice === undefined) return "ok";
    if (!isRecord(choice)) return "invalid";
    const finish = choice["finish_reason"];
    if (typeof finish === "string" && finish !== "") this.#finish = finish;
    // Only deltas count: a `message` some servers add to the last chunk repeats what the deltas said.
    const delta = choice["delta"];
    if (delta === undefined || delta === null) return "ok";
    if (!isRecord(delta)) return "invalid";
    const content = delta["content"];
    if (typeof content === "string") this.#content += content;
    const calls = delta["tool_calls"];
    if (Array.isArray(calls)) {
      for (const piece of calls) if (!this.#applyCall(piece)) return "invalid";
    }
    const legacy = delta["function_call"];
    if (isRecord(legacy)) {
      this.#legacy ??= { name: "", arguments: "" };
      if (typeof legacy["name"] === "string" && this.#legacy.name === "") this.#legacy.name = legacy["name"];
      if (typeof legacy["arguments"] === "string") this.#legacy.arguments += legacy["arguments"];
    }
    return "ok";
  }

  #applyCall(piece: unknown): boolean {
    if (!isRecord(piece)) return false;
    const fn = isRecord(piece["function"]) ? piece["function"] : {};
    const id = typeof piece["id"] === "string" ? piece["id"] : "";
    const index = typeof piece["index"] === "number" && Number.isInteger(piece["index"]) ? piece["index"] : null;
    let slot = index === null ? undefined : this.#byIndex.get(index);
    if (slot === undefined && index === null) {
      const last = this.#calls[this.#calls.length - 1];
      slot = last !== undefined && (id === "" || id === last.id) ? last : undefined;
    }
    if (slot === undefined) {
      if (this.#calls.length >= 256) return false;
      slot = { id: "", name: "", arguments: "" };
      this.#calls.push(slot);
      if (index !== null) this.#byIndex.set(index, slot);
    }
    if (id !== "" && slot.id === "") slot.id = id;
    const name = fn["name"];
    if (typeof name === "string" && name !== "" && slot.name !== name) slot.name = slot.name === "" ? name : slot.name + name;
    const args = fn["arguments"];
    if (typeof args === "string") slot.arguments = typeof slot.arguments === "string" ? slot.arguments + args : args;
    else if (isRecord(args)) slot.arguments = args;
    return true;
  }

  /** The completion a non-streaming response would have carried (validated by the caller). */
  completion(): unknown {
    const message: Record<string, unknown> = { role: "assistant", content: this.#content };
    if (this.#calls.length > 0) {
      message["tool_calls"] = this.#calls.map((call) => ({
        id: call.id, type: "function", function: { name: call.name, arguments: call.arguments },
      }));
    }
    if (this.#legacy !== null) message["function_call"] = this.#legacy;
    return { choices: [{ index: 0, message, finish_reason: this.#finish }] };
  }
}
