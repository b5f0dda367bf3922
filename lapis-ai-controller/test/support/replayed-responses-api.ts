// TEST STAND-IN that replays a REAL model: it answers every POST /v1/responses
// on 127.0.0.1 with a stream recorded from the real llama-server
// (scripts/recordings/record-reasoning-stream.ts), byte for byte: the
// recorded file is sent as its own server-sent events, one write each, in
// order, nothing added or changed. It records every request body. It drives
// the REAL Codex (over codex-acp or its app-server) in tests that need what
// only a real model produced, e.g. reasoning.
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** Where recordings live: test/fixtures/recordings/<name>.sse, with <name>.json saying what produced them. */
export const RECORDINGS = join(import.meta.dirname, "..", "fixtures", "recordings");

const MAX_BODY = 8 * 1024 * 1024;

/** A recording read from disk: its exact bytes and what the recorder noted about it. */
export type Recording = { readonly bytes: Buffer; readonly meta: { readonly contentType: string; readonly sse: { readonly bytes: number; readonly sha256: string } } & Record<string, unknown> };

/** Reads `<name>.sse` and `<name>.json` from the recordings folder. */
export function readRecording(name: string): Recording {
  const bytes = readFileSync(join(RECORDINGS, `${name}.sse`));
  const meta = JSON.parse(readFileSync(join(RECORDINGS, `${name}.json`), "utf8")) as Recording["meta"];
  return { bytes, meta };
}

/** One server-sent event of a recording: its `event:` name and parsed `data:` JSON. */
export type RecordedEvent = { readonly event: string; readonly data: Record<string, unknown> };

/** The events of a recording in order (what a client of the stream parses out of it). */
export function recordedEvents(rec: Recording): RecordedEvent[] {
  return splitEvents(rec.bytes).map((raw) => {
    const lines = raw.toString("utf8").split("\n");
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "";
    const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return { event, data: JSON.parse(data) as Record<string, unknown> };
  });
}

/** Splits the bytes after each blank line (the end of an event); the pieces concatenate to the input. */
function splitEvents(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (let i = bytes.indexOf("\n\n"); i !== -1; i = bytes.indexOf("\n\n", at)) {
    out.push(bytes.subarray(at, i + 2));
    at = i + 2;
  }
  if (at < bytes.length) out.push(bytes.subarray(at));
  return out;
}

/** A running replay server. */
export type ReplayedResponsesApi = {
  /** Base URL for a Codex model provider, ending in /v1. */
  readonly baseUrl: string;
  /** Parsed JSON bodies of every request, in order (each was answered with the recording). */
  readonly requests: Record<string, unknown>[];
  close(): Promise<void>;
};

/** Starts the replay of `rec` on 127.0.0.1 with an ephemeral port. */
export async function startReplayedResponsesApi(rec: Recording): Promise<ReplayedResponsesApi> {
  const events = splitEvents(rec.bytes);
  if (Buffer.concat(events).compare(rec.bytes) !== 0) throw new Error("replay: the split recording differs from the file");
  const requests: Record<string, unknown>[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || !(req.url ?? "").startsWith("/v1/responses")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not recorded" } }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (b: Buffer) => { size += b.length; if (size <= MAX_BODY) chunks.push(b); });
    req.on("end", () => {
      try { requests.push(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>); } catch { requests.push({}); }
      res.writeHead(200, { "content-type": rec.meta.contentType, "cache-control": "no-cache", connection: "keep-alive" });
      for (const e of events) res.write(e);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
