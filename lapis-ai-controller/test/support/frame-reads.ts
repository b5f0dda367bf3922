// A `ws` server on 127.0.0.1 that counts how many reads (socket `data` events)
// each frame from its client takes to arrive. A client that hands the kernel a
// frame in one write arrives in one read; one that writes header and payload
// apart with Nagle's algorithm on arrives in two, the payload held back until
// the server's delayed ACK (the count, not the time, is what tests assert).
import type { AddressInfo, Socket } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/** One server request answered by the client, with the reads its answer took. */
export type CountedAnswer = { readonly text: string; readonly reads: number };

/** A running counting server. */
export type FrameReadServer = {
  readonly url: string;
  /** Sends `frame` to the (first) connected client and resolves with its next message and the reads it took. */
  ask(frame: string): Promise<CountedAnswer>;
  close(): Promise<void>;
};

/** Starts the server; `ask` waits for the first connection. */
export async function startFrameReadServer(): Promise<FrameReadServer> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    wss.once("listening", resolve);
    wss.once("error", reject);
  });
  let reads = 0;
  const connected = new Promise<WebSocket>((resolve) => {
    wss.once("connection", (socket, request) => {
      // Before ws's own listener, which emits the message within the same event.
      (request.socket as Socket).prependListener("data", () => { reads += 1; });
      resolve(socket);
    });
  });
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    async ask(frame) {
      const socket = await connected;
      return await new Promise<CountedAnswer>((resolve) => {
        socket.once("message", (data) => resolve({ text: String(data), reads }));
        reads = 0;
        socket.send(frame);
      });
    },
    close: () => new Promise<void>((resolve) => {
      for (const client of wss.clients) client.terminate();
      wss.close(() => resolve());
    }),
  };
}
