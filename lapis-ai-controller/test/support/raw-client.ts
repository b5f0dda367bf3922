// A raw JSON-RPC client over the runtime's WebSocket for black-box protocol
// tests: sends exact frames, records every text it receives, and never hides
// what the server answered.

/** A received frame: its exact text and its parsed value. */
export interface Received {
  readonly text: string;
  readonly value: Record<string, unknown>;
}

/** A raw socket with request/response helpers and bounded waits. */
export class RawClient {
  readonly socket: WebSocket;
  readonly received: Received[] = [];
  closeCode: number | null = null;
  #waiters: Array<() => void> = [];
  #next = 0;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.addEventListener("message", (event) => {
      const text = String(event.data);
      let value: Record<string, unknown> = {};
      try {
        value = JSON.parse(text) as Record<string, unknown>;
      } catch {
        // keep the raw text only
      }
      this.received.push({ text, value });
      this.#wake();
    });
    socket.addEventListener("close", (event) => {
      this.closeCode = event.code;
      this.#wake();
    });
  }

  /** Opens a socket to `url` within `timeoutMs`. */
  static open(url: string, timeoutMs = 5000): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const timer = setTimeout(() => reject(new Error("open timeout")), timeoutMs);
      socket.addEventListener("open", () => {
        clearTimeout(timer);
        resolve(new RawClient(socket));
      });
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        reject(new Error("open failed"));
      });
    });
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Waits until `predicate` holds, at most `timeoutMs`. */
  async until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("wait timeout");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends raw text. */
  sendText(text: string): void {
    this.socket.send(text);
  }

  /** Sends a request and returns the frame answering it. */
  async request(method: string, params: Record<string, unknown> = {}, timeoutMs = 5000): Promise<Received> {
    const id = `r${++this.#next}`;
    this.sendText(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return this.reply(id, timeoutMs);
  }

  /** The frame answering request `id`. */
  async reply(id: string | number | null, timeoutMs = 5000): Promise<Received> {
    const find = () => this.received.find((r) => r.value.id === id && ("result" in r.value || "error" in r.value));
    await this.until(() => find() !== undefined || this.closeCode !== null, timeoutMs);
    const found = find();
    if (found === undefined) throw new Error(`no reply to ${String(id)} (closed ${this.closeCode})`);
    return found;
  }

  /** Waits for the socket to close and returns its code. */
  async closed(timeoutMs = 5000): Promise<number> {
    await this.until(() => this.closeCode !== null, timeoutMs);
    return this.closeCode as number;
  }

  /** Notifications received so far with this method. */
  notifications(method: string): Record<string, unknown>[] {
    return this.received.filter((r) => r.value.method === method && !("id" in r.value)).map((r) => r.value.params as Record<string, unknown>);
  }

  close(): void {
    try {
      this.socket.close();
    } catch {
      // already closed
    }
  }
}

/** The error code of a reply frame, or undefined for a result. */
export function errorCode(reply: Received): string | undefined {
  const error = reply.value.error as { data?: { code?: string } } | undefined;
  return error?.data?.code;
}

/** The result of a reply frame (throws on an error reply, naming its code). */
export function resultOf<T = Record<string, unknown>>(reply: Received): T {
  if ("error" in reply.value) throw new Error(`error reply: ${errorCode(reply)}`);
  return reply.value.result as T;
}

/** The exact result text of a reply frame. */
export function rawResultText(reply: Received): string {
  const marker = reply.text.indexOf('"result":');
  return reply.text.slice(marker + 9, -1);
}
