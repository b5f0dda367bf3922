// A loopback TCP proxy for fault injection: tests cut every connection
// through it at a chosen moment (a dropped socket mid-stream or before a
// receipt) while the listener stays up for the reconnect.
import { createConnection, createServer } from "node:net";
import type { Server, Socket } from "node:net";

/** A running proxy in front of 127.0.0.1:`targetPort`. */
export interface TcpProxy {
  readonly url: string;
  /** Destroys every proxied connection now; new connections are accepted. */
  cut(): void;
  /** Number of client connections accepted so far. */
  readonly accepted: number;
  /**
   * Loses the next server-to-client data holding `needle` (a reply whose
   * request already reached the server): that data is not forwarded and every
   * connection is cut. Resolves once it happened.
   */
  dropReplyWith(needle: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts a proxy on an ephemeral loopback port. */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<[Socket, Socket]>();
  let accepted = 0;
  let trap: { needle: Buffer; fired: () => void } | null = null;
  const cutAll = () => {
    for (const [a, b] of [...pairs]) {
      a.destroy();
      b.destroy();
    }
    pairs.clear();
  };
  const server: Server = createServer((client) => {
    accepted++;
    const upstream = createConnection({ host: "127.0.0.1", port: targetPort });
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on("error", drop);
    upstream.on("error", drop);
    client.on("close", drop);
    upstream.on("close", drop);
    // Like a reverse proxy, it names its upstream in the handshake's Host header
    // (the listener refuses a Host that is not its own loopback address and port).
    let head: Buffer | null = Buffer.alloc(0);
    client.on("data", (chunk: Buffer) => {
      if (head === null) return void upstream.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end === -1 && head.length < 64 * 1024) return;
      const text = head.toString("latin1");
      upstream.write(Buffer.from(text.replace(/\r\nhost:[^\r]*/i, `\r\nHost: 127.0.0.1:${targetPort}`), "latin1"));
      head = null;
    });
    // The tail of the previous chunk, so a needle split across chunks is still found.
    let tail: Buffer = Buffer.alloc(0);
    upstream.on("data", (chunk: Buffer) => {
      const t = trap;
      if (t !== null && Buffer.concat([tail, chunk]).includes(t.needle)) {
        trap = null;
        cutAll();
        t.fired();
        return;
      }
      tail = chunk.subarray(Math.max(0, chunk.length - 512));
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `ws://127.0.0.1:${port}`,
    cut: cutAll,
    dropReplyWith(needle) {
      return new Promise((resolve) => { trap = { needle: Buffer.from(needle, "utf8"), fired: resolve }; });
    },
    get accepted() {
      return accepted;
    },
    close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
