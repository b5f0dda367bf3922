// The protocol's view of one `ws` socket (connection.ts RawSocket). Frames
// sent together (a subscription pump's page of events) leave in one write of
// the TCP socket: it is corked while ws frames them and uncorked after, so
// Node writes them with one writev instead of one write (a syscall, and a
// wake-up of the reader) per frame. Order and bytes are what one send per
// frame gives.
import type { WebSocket } from "ws";
import type { RawSocket } from "./connection.ts";

type Corkable = { cork(): void; uncork(): void };

/** The TCP stream under a `ws` socket when it can be corked (ws keeps it as `_socket`), else null. */
function streamOf(socket: WebSocket): Corkable | null {
  const stream = (socket as unknown as { _socket?: Partial<Corkable> | null })._socket;
  return stream !== null && stream !== undefined && typeof stream.cork === "function" && typeof stream.uncork === "function" ? (stream as Corkable) : null;
}

/** Adapts a `ws` socket; `sendAll` writes its frames in one write where the stream can be corked. */
export function rawSocket(socket: WebSocket): RawSocket {
  return {
    send: (text) => socket.send(text),
    close: (code, reason) => socket.close(code, reason),
    get bufferedAmount() { return socket.bufferedAmount; },
    sendAll(texts) {
      const stream = texts.length > 1 ? streamOf(socket) : null;
      stream?.cork();
      try {
        for (const text of texts) socket.send(text);
      } finally {
        stream?.uncork();
      }
    },
  };
}
