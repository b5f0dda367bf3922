import { errorCode } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { RoomWritePort } from "../matrix/port.ts";

/** Typing notification lifetime requested from the server (clamped to 15-45 s by servers). */
export const TYPING_TIMEOUT_MS = 30_000;
/** How often the notification is renewed while work continues. */
export const TYPING_REFRESH_MS = 20_000;
/** Deadline of the best-effort clear. */
const CLEAR_DEADLINE_MS = 5_000;

/**
 * A renewable typing notification for one room: starts when
 * work starts, refreshes every 20 s, and is cleared in every exit path.
 * Failures are logged and never fail the invocation.
 */
export class TypingLease {
  readonly #room: string;
  readonly #port: Pick<RoomWritePort, "setTyping">;
  readonly #log: Logger;
  readonly #refreshMs: number;
  #timer: NodeJS.Timeout | null = null;
  #active = false;
  #starting: Promise<void> | null = null;

  constructor(roomId: string, port: Pick<RoomWritePort, "setTyping">, log: Logger, refreshMs = TYPING_REFRESH_MS) {
    this.#room = roomId;
    this.#port = port;
    this.#log = log;
    this.#refreshMs = refreshMs;
  }

  /**
   * Sends `typing: true` and schedules refreshes until `stop()`. The work need
   * not wait for it (the notification is advisory); `stop()` does.
   */
  start(signal: AbortSignal): Promise<void> {
    this.#active = true;
    this.#starting = this.#send(true, signal).then(() => {
      if (!this.#active) return;
      this.#timer = setInterval(() => void this.#send(true, signal), this.#refreshMs);
      this.#timer.unref();
    });
    return this.#starting;
  }

  /** Cancels refreshing and clears the notification (best effort, own short deadline). */
  async stop(): Promise<void> {
    const wasActive = this.#active;
    this.#active = false;
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    // "Not typing" must reach the server after "typing", never before it.
    if (this.#starting !== null) await this.#starting;
    if (wasActive) await this.#send(false, AbortSignal.timeout(CLEAR_DEADLINE_MS));
  }

  async #send(typing: boolean, signal: AbortSignal): Promise<void> {
    if (typing && (!this.#active || signal.aborted)) return;
    try {
      const result = await this.#port.setTyping(this.#room, typing, TYPING_TIMEOUT_MS, signal);
      if (!result.ok) this.#log.debug("typing_failed", { typing, code: result.error.code });
    } catch (error) {
      this.#log.warn("typing_failed", { typing, code: errorCode(error) });
    }
  }
}
