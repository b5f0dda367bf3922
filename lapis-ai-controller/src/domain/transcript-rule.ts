// The transcript rule: the shape a thread's history has when the controller
// replays it, sends it to an application's transcript store or reads it back,
// and the validator every side applies (the controller before it sends, the
// SDK before it hands entries to a store and after it reads them back, and a
// consumer's own persistence through the public contracts facade).
import type { Json } from "./records.ts";

/** One transcript event, as replay returns it. */
export interface TranscriptEvent {
  readonly seq: number;
  readonly kind: string;
  readonly turnId?: string | null;
  readonly messageId?: string | null;
  readonly createdAt: number;
  readonly metadata?: { readonly [key: string]: string | number | boolean | null };
  readonly payload?: Json;
  readonly payloadUnavailable?: true;
}

/** A consumer-owned transcript of one thread: contiguous seqs from `fromSeq`. */
export interface Transcript {
  readonly threadId: string;
  readonly events: readonly TranscriptEvent[];
}

/** Thrown by assertTranscript; the message is a code and a key path, never a value. */
export class TranscriptInvalid extends TypeError {
  readonly path: string;
  constructor(path: string) {
    super(`transcript_invalid: ${path}`);
    this.name = "TranscriptInvalid";
    this.path = path;
  }
}

const KIND = /^[a-z][a-z0-9_]{0,63}$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;
const EVENT_KEYS = new Set(["seq", "kind", "turnId", "messageId", "createdAt", "metadata", "payload", "payloadUnavailable"]);

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function checkJson(value: unknown, path: string, depth: number): void {
  if (depth > 64) throw new TranscriptInvalid(path);
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TranscriptInvalid(path);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkJson(item, `${path}[${i}]`, depth + 1));
    return;
  }
  if (typeof value !== "object") throw new TranscriptInvalid(path);
  for (const [k, v] of Object.entries(value)) checkJson(v, `${path}.${k.slice(0, 64)}`, depth + 1);
}

function checkEvent(e: unknown, path: string, expectedSeq: number | null): number {
  if (typeof e !== "object" || e === null || Array.isArray(e)) throw new TranscriptInvalid(path);
  const event = e as Record<string, unknown>;
  for (const key of Object.keys(event)) if (!EVENT_KEYS.has(key)) throw new TranscriptInvalid(`${path}.${key.slice(0, 64)}`);
  if (!isCount(event.seq) || event.seq < 1 || (expectedSeq !== null && event.seq !== expectedSeq)) throw new TranscriptInvalid(`${path}.seq`);
  if (typeof event.kind !== "string" || !KIND.test(event.kind)) throw new TranscriptInvalid(`${path}.kind`);
  for (const key of ["turnId", "messageId"]) {
    const v = event[key];
    if (v !== undefined && v !== null && (typeof v !== "string" || !ID.test(v))) throw new TranscriptInvalid(`${path}.${key}`);
  }
  if (!isCount(event.createdAt)) throw new TranscriptInvalid(`${path}.createdAt`);
  if (event.metadata !== undefined) {
    const m = event.metadata;
    if (typeof m !== "object" || m === null || Array.isArray(m)) throw new TranscriptInvalid(`${path}.metadata`);
    for (const [k, v] of Object.entries(m)) {
      if (v !== null && !["string", "number", "boolean"].includes(typeof v)) throw new TranscriptInvalid(`${path}.metadata.${k.slice(0, 64)}`);
    }
  }
  if (event.payloadUnavailable !== undefined && (event.payloadUnavailable !== true || "payload" in event)) {
    throw new TranscriptInvalid(`${path}.payloadUnavailable`);
  }
  if ("payload" in event) checkJson(event.payload, `${path}.payload`, 0);
  return event.seq;
}

/** Validates a transcript (shape, contiguous seqs, JSON payloads); throws TranscriptInvalid. */
export function assertTranscript(value: unknown): asserts value is Transcript {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new TranscriptInvalid("transcript");
  const t = value as Record<string, unknown>;
  for (const key of Object.keys(t)) if (key !== "threadId" && key !== "events") throw new TranscriptInvalid(key.slice(0, 64));
  if (typeof t.threadId !== "string" || !ID.test(t.threadId)) throw new TranscriptInvalid("threadId");
  if (!Array.isArray(t.events)) throw new TranscriptInvalid("events");
  let expected: number | null = null;
  t.events.forEach((event, i) => {
    expected = checkEvent(event, `events[${i}]`, expected) + 1;
  });
}
