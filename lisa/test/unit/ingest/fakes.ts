// Test doubles for ingestion: a scripted SyncPort with per-room histories for
// back-pagination, event builders, and a logger that records event names.

import { err, ok, type Result } from "../../../src/errors.ts";
import type { LogFields, Logger } from "../../../src/log/logger.ts";
import { MatrixError } from "../../../src/matrix/errors.ts";
import type { EventPage, RawEvent, SyncBatch, SyncPort, SyncRequest, SyncRoom } from "../../../src/matrix/port.ts";

/** Lisa's id in ingest unit tests. */
export const SELF = "@lisa:example.org";
/** Rooms of the ingest unit tests. */
export const ROOM_A = "!a:example.org";
export const ROOM_B = "!b:example.org";
export const ROOM_OUT = "!outside:example.org";

/** A message event; `n` makes the id unique and sets the timestamp. */
export function ev(n: number, body = `message ${n}`, extra: Partial<RawEvent> = {}): RawEvent {
  return {
    event_id: `$e${n}:example.org`,
    type: "m.room.message",
    sender: "@alice:example.org",
    origin_server_ts: 1_700_000_000_000 + n * 1_000,
    content: { msgtype: "m.text", body },
    ...extra,
  };
}

/** A mention of Lisa. */
export function mention(n: number, extra: Partial<RawEvent> = {}): RawEvent {
  return ev(n, `Lisa, question ${n}?`, extra);
}

/** A room part of a sync response. */
export function room(roomId: string, events: readonly RawEvent[], limited = false, prevBatch: string | null = null): SyncRoom {
  return { roomId, events, limited, prevBatch };
}

/** Pagination token of "everything before index `i`" of a history. */
export const before = (i: number): string => `p${i}`;

/** A failed Matrix call. */
export function matrixError(code: string, retryable = true): MatrixError {
  return new MatrixError(code, { errcode: null, httpStatus: null, retryAfterMs: null }, retryable);
}

/** A SyncPort whose sync results are queued and whose rooms have fixed histories (server order). */
export class ScriptedSync implements SyncPort {
  readonly requests: SyncRequest[] = [];
  readonly pageCalls: { roomId: string; from: string; limit: number }[] = [];
  readonly #results: Result<SyncBatch, MatrixError>[] = [];
  readonly #histories = new Map<string, readonly RawEvent[]>();
  readonly #pageSize: number;
  #pageFailure: MatrixError | null = null;

  constructor(pageSize = 3) {
    this.#pageSize = pageSize;
  }

  /** Queues one sync response. */
  respond(nextBatch: string, rooms: readonly SyncRoom[]): this {
    this.#results.push(ok({ nextBatch, rooms }));
    return this;
  }

  /** Queues one sync failure. */
  fail(error: MatrixError): this {
    this.#results.push(err(error));
    return this;
  }

  /** Sets a room's full history for `/messages`. */
  history(roomId: string, events: readonly RawEvent[]): this {
    this.#histories.set(roomId, events);
    return this;
  }

  /** Makes every later `/messages` call fail. */
  failPages(error: MatrixError): void {
    this.#pageFailure = error;
  }

  async sync(request: SyncRequest): Promise<Result<SyncBatch, MatrixError>> {
    this.requests.push(request);
    const next = this.#results.shift();
    if (next === undefined) throw new Error("no scripted sync response left");
    return next;
  }

  async messagesBackwards(roomId: string, from: string, limit: number): Promise<Result<EventPage, MatrixError>> {
    this.pageCalls.push({ roomId, from, limit });
    if (this.#pageFailure !== null) return err(this.#pageFailure);
    const events = this.#histories.get(roomId) ?? [];
    const end = Number(from.slice(1));
    const start = Math.max(0, end - Math.min(limit, this.#pageSize));
    const page = events.slice(start, end).reverse();
    return ok({ events: page, next: start === 0 ? null : before(start) });
  }
}

/** A logger that keeps every line as { level, event, fields }. */
export function recordingLogger(): Logger & { readonly lines: { level: string; event: string; fields: LogFields }[] } {
  const lines: { level: string; event: string; fields: LogFields }[] = [];
  const make = (bindings: LogFields): Logger => ({
    debug: (event, fields) => void lines.push({ level: "debug", event, fields: { ...bindings, ...fields } }),
    info: (event, fields) => void lines.push({ level: "info", event, fields: { ...bindings, ...fields } }),
    warn: (event, fields) => void lines.push({ level: "warn", event, fields: { ...bindings, ...fields } }),
    error: (event, fields) => void lines.push({ level: "error", event, fields: { ...bindings, ...fields } }),
    child: (more) => make({ ...bindings, ...more }),
  });
  return Object.assign(make({}), { lines });
}
