// Shared helpers of the Matrix core integration tests: ledger access while
// Lisa is stopped or running, captured log records, reply counting, and the
// "sentinel" pattern that proves a negative without waiting on a clock
// (rooms are strictly FIFO, so once a later mention is answered every earlier
// event of that room has been decided).

import type { ChildProcess } from "node:child_process";
import { setTimeout as delay } from "node:timers/promises";
import { openStateStore } from "../../../src/state/store.ts";
import type { InvocationRow, StateStore } from "../../../src/state/types.ts";
import type { ClientEvent } from "../../support/fake-homeserver.ts";
import {
  ALICE, createWorld, lisaReplies, repliedTo, startInProcess, until, waitForBaseline, type InProcessLisa, type World, type WorldOptions,
} from "../../support/lisa-harness.ts";

/** Every homeserver profile a profile-independent scenario runs under. */
export const PROFILES = ["synapse", "continuwuity", "dendrite"] as const;

/** Generous deadline for one reply (LLM retries and backoff included). */
export const REPLY_DEADLINE_MS = 30_000;

/** Starts Lisa in process and waits for a committed sync position. */
export async function startLisa(world: World): Promise<InProcessLisa> {
  const lisa = startInProcess(world);
  await waitForBaseline(lisa.store, 15_000);
  return lisa;
}

/** One scenario's world plus a Lisa starter whose instances are stopped at the end. */
export interface Scenario {
  readonly world: World;
  /** Starts Lisa in process without waiting for anything. */
  launch(): InProcessLisa;
  /** Starts Lisa in process and waits for a committed sync position. */
  start(): Promise<InProcessLisa>;
}

/** Runs `body` in a fresh world; stops every Lisa still running and closes the fakes afterwards. */
export async function scenario(options: WorldOptions, body: (s: Scenario) => Promise<void>): Promise<void> {
  const world = await createWorld(options);
  const running = new Set<InProcessLisa>();
  const launch = (): InProcessLisa => {
    const lisa = startInProcess(world);
    running.add(lisa);
    void lisa.done.finally(() => running.delete(lisa));
    return lisa;
  };
  try {
    await body({
      world,
      launch,
      start: async () => {
        const lisa = launch();
        await waitForBaseline(lisa.store, 15_000);
        return lisa;
      },
    });
  } finally {
    for (const lisa of running) await lisa.stop();
    await world.close();
  }
}

/** Opens the ledger for writing (Lisa must be stopped) and closes it after `work`. */
export function withLedger<T>(world: World, work: (store: StateStore) => T): T {
  const opened = openStateStore(world.config.runtime.database_path, { mode: "run" });
  if (!opened.ok) throw opened.error;
  try {
    return work(opened.value);
  } finally {
    opened.value.close();
  }
}

/** Reads the ledger without the lock (works while a child Lisa runs). */
export function peekLedger<T>(world: World, work: (store: StateStore) => T): T {
  const opened = openStateStore(world.config.runtime.database_path, { mode: "readonly" });
  if (!opened.ok) throw opened.error;
  try {
    return work(opened.value);
  } finally {
    opened.value.close();
  }
}

/** One invocation row read without the lock; fails the test when absent. */
export function ledgerRow(world: World, eventId: string): InvocationRow {
  const row = peekLedger(world, (store) => store.invocation(eventId));
  if (row === null) throw new Error(`no ledger row for ${eventId}`);
  return row;
}

/** Parsed log records of in-process runs, optionally only those of one event name. */
export function logRecords(world: World, event?: string): Record<string, unknown>[] {
  const records = world.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
  return event === undefined ? records : records.filter((r) => r["event"] === event);
}

/** Lisa's messages in `roomId` that reply to `eventId`. */
export function repliesTo(world: World, roomId: string, eventId: string): ClientEvent[] {
  return lisaReplies(world, roomId).filter((e) => repliedTo(e) === eventId);
}

/** Waits until Lisa has replied to `eventId`; returns the (first) reply. */
export async function waitForReply(world: World, roomId: string, eventId: string, timeoutMs = REPLY_DEADLINE_MS): Promise<ClientEvent> {
  await until(() => repliesTo(world, roomId, eventId).length > 0, timeoutMs, `Lisa's reply to ${eventId}`);
  const reply = repliesTo(world, roomId, eventId)[0];
  if (reply === undefined) throw new Error("reply vanished");
  return reply;
}

let sentinelCounter = 0;

/**
 * Sends a fresh mention into `roomId` and waits for its reply. Every event
 * sent earlier into that room has then been ingested and decided.
 */
export async function settle(world: World, roomId: string, sender = ALICE): Promise<string> {
  sentinelCounter += 1;
  const id = world.hs.sendText(roomId, sender, `Lisa, sentinel question ${sentinelCounter}?`);
  await waitForReply(world, roomId, id);
  return id;
}

/** The target of every Lisa message in `roomId`, oldest first. */
export function replyTargets(world: World, roomId: string): (string | null)[] {
  return lisaReplies(world, roomId).map((e) => repliedTo(e));
}

/** A content body's text, or "" when absent. */
export function bodyOf(event: { readonly content: Readonly<Record<string, unknown>> }): string {
  const body = event.content["body"];
  return typeof body === "string" ? body : "";
}

/** Resolves after `ms` (only to pace a stream of events, never as an assertion). */
export function pause(ms: number): Promise<void> {
  return delay(ms);
}

/** A deferred gate: `wait()` blocks until `open()`. */
export interface Gate {
  wait(): Promise<void>;
  open(): void;
  readonly opened: boolean;
}

/** Builds a closed gate. */
export function gate(): Gate {
  let release: () => void = () => undefined;
  let opened = false;
  const promise = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    wait: () => promise,
    open: () => {
      opened = true;
      release();
    },
    get opened() {
      return opened;
    },
  };
}

/** Resolves with `promise`, or rejects after `timeoutMs` (a deadline for the test, not an assertion on speed). */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits until a child's stdout and stderr have been read to the end: its
 * `exit` event can arrive before the last piped output has been read.
 */
export async function outputEnded(child: ChildProcess, timeoutMs = 15_000): Promise<void> {
  const ended = (): boolean => [child.stdout, child.stderr].every((stream) => stream === null || stream.readableEnded);
  await until(ended, timeoutMs, "the child's output read to the end");
}
