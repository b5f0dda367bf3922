// A WebSocket handshake written byte by byte over node:net, so a test sets
// the exact `Host` and `Origin` headers a browser or a DNS-rebinding page
// would send (the WHATWG WebSocket cannot). On 101 it speaks just enough
// RFC 6455 (masked client text frames, unmasked server text frames) for one
// JSON-RPC request at a time. Every wait has a deadline; the socket is
// destroyed by close().
import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";

/** The handshake's outcome: the HTTP status line's code, and on 101 a frame channel. */
export type Upgraded = { readonly status: number; request(frame: Record<string, unknown>, timeoutMs?: number): Promise<Record<string, unknown>>; close(): void };

function textFrame(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  const mask = randomBytes(4);
  const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i += 1) masked[i] = (payload[i] as number) ^ (mask[i % 4] as number);
  return Buffer.concat([header, mask, masked]);
}

/** Parses one whole unmasked server frame at the start of `buffer`, or null when more bytes are needed. */
function serverFrame(buffer: Buffer): { text: string; rest: Buffer } | null {
  if (buffer.length < 2) return null;
  let length = (buffer[1] as number) & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  if (buffer.length < offset + length) return null;
  return { text: buffer.subarray(offset, offset + length).toString("utf8"), rest: buffer.subarray(offset + length) };
}

/** Opens `ws://127.0.0.1:port/` sending exactly `headers` (Host included) and resolves once the status line is read. */
export function rawUpgrade(port: number, headers: Readonly<Record<string, string>>, timeoutMs = 5000): Promise<Upgraded> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, "127.0.0.1");
    let buffer: Buffer = Buffer.alloc(0);
    let status = 0;
    const frames: string[] = [];
    let wake: (() => void) | null = null;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error("handshake timeout"));
    }, timeoutMs);
    socket.on("error", (error) => {
      clearTimeout(timer);
      if (status === 0) reject(error);
    });
    socket.on("close", () => wake?.());
    socket.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (status === 0) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end === -1) return;
        status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buffer.subarray(0, end).toString("latin1"))?.[1] ?? -1);
        buffer = buffer.subarray(end + 4);
        clearTimeout(timer);
        resolve({ status, request, close: () => socket.destroy() });
      }
      for (let frame = serverFrame(buffer); frame !== null; frame = serverFrame(buffer)) {
        frames.push(frame.text);
        buffer = frame.rest;
      }
      wake?.();
    });
    const lines = ["GET / HTTP/1.1", "Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}`];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);

    async function request(frame: Record<string, unknown>, waitMs = 5000): Promise<Record<string, unknown>> {
      socket.write(textFrame(JSON.stringify(frame)));
      const deadline = Date.now() + waitMs;
      for (;;) {
        const found = frames.map((t) => JSON.parse(t) as Record<string, unknown>).find((f) => f.id === frame.id);
        if (found !== undefined) return found;
        if (Date.now() > deadline || socket.destroyed) throw new Error("no reply");
        await new Promise<void>((r) => {
          const t = setTimeout(r, Math.max(1, deadline - Date.now()));
          wake = () => {
            clearTimeout(t);
            r();
          };
        });
      }
    }
  });
}
