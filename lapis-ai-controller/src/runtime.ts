// The runtime facade: application-neutral session events over the SDK client
// (P-SDK-01). A consumer sees activity events and explicit status events;
// a stored `payloadUnavailable` marker becomes a `payload_unavailable` gap
// instead of being dropped (P-STO-17). No provider names appear here.
import type { ClientOptions, ThreadEventDelivery } from "./client.ts";
import { ControllerClient } from "./client.ts";
import { gapFolder } from "./domain/transcript-gaps.ts";

/** One session event as a consumer sees it. */
export type SessionEvent =
  | {
    readonly type: "activity";
    readonly threadId: string;
    readonly seq: number;
    readonly kind: string;
    readonly turnId: string | null;
    readonly messageId: string | null;
    readonly payload: unknown;
  }
  | { readonly type: "status"; readonly threadId: string; readonly gap: "payload_unavailable"; readonly fromSeq: number; readonly toSeq: number }
  | { readonly type: "snapshot"; readonly threadId: string; readonly lastSeq: number; readonly truncated: boolean };

/** A consumer of session events. */
export type SessionListener = (event: SessionEvent) => void;

/** Maps one delivered journal event to a session event. */
export function toSessionEvent(delivery: ThreadEventDelivery): SessionEvent {
  const e = delivery.event;
  if (e.payloadUnavailable === true) {
    return { type: "status", threadId: delivery.threadId, gap: "payload_unavailable", fromSeq: delivery.seq, toSeq: delivery.seq };
  }
  return {
    type: "activity",
    threadId: delivery.threadId,
    seq: delivery.seq,
    kind: String(e.kind),
    turnId: typeof e.turnId === "string" ? e.turnId : null,
    messageId: typeof e.messageId === "string" ? e.messageId : null,
    payload: e.payload ?? null,
  };
}

/** The runtime facade over one SDK client. */
export class ControllerRuntime {
  readonly client: ControllerClient;

  private constructor(client: ControllerClient) {
    this.client = client;
  }

  /** Connects the underlying SDK client. */
  static async connect(options: ClientOptions): Promise<ControllerRuntime> {
    return new ControllerRuntime(await ControllerClient.connect(options));
  }

  /**
   * Watches a thread from `afterSeq` (0: its whole retained history). Runs of
   * lost payloads arrive as one gap each; a reconnect yields a `snapshot`.
   */
  async watch(threadId: string, listener: SessionListener, afterSeq = 0): Promise<void> {
    // Adjacent lost rows merge into one gap (domain/transcript-gaps.ts); it is reported when the run ends.
    const folder = gapFolder<SessionEvent>((item) => listener(item.type === "event" ? item.event : { ...item, threadId }));
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      folder.flush();
    };
    await this.client.subscribe(threadId, {
      event: (delivery) => {
        const event = toSessionEvent(delivery);
        if (timer !== null) clearTimeout(timer);
        timer = null;
        folder.push(delivery.seq, event.type === "status", event);
        // A run still open is closed once the current burst of deliveries is over.
        if (event.type === "status") timer = setTimeout(flush, 0);
      },
      snapshot: (snap) => {
        flush();
        listener({ type: "snapshot", threadId, lastSeq: Number(snap.lastSeq), truncated: snap.truncated === true });
      },
    }, afterSeq);
  }

  /** Closes the client. */
  close(): void {
    this.client.close();
  }
}
