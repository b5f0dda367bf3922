// A transparent recording pass-through in front of the real llama-server:
// every request is forwarded unchanged and the real response streamed back,
// while the test sees each exchange (to compare Lisa's reply with the
// model's own words, and to know when a request is in flight). It answers
// nothing itself: when the upstream fails, the client's socket is destroyed,
// as a direct connection to a dying server would be.
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One forwarded exchange. */
export interface TapExchange {
  readonly method: string;
  readonly path: string;
  readonly requestBody: string;
  /** Upstream status, or null while in flight / when the upstream failed. */
  status: number | null;
  responseBody: string;
  /** Set when the upstream connection failed (refused, reset). */
  upstreamError: string | null;
  readonly startedAt: number;
  /** ms from request to the end of the response (null while in flight). */
  durationMs: number | null;
}

/** A running tap. */
export interface LlamaTap {
  /** `http://127.0.0.1:PORT/v1`: Lisa's `llm.base_url`. */
  readonly baseUrl: string;
  /** Every exchange, oldest first. */
  readonly exchanges: TapExchange[];
  /** Chat-completion exchanges only. */
  completions(): TapExchange[];
  /** Exchanges still waiting for the upstream. */
  inFlight(): TapExchange[];
  close(): Promise<void>;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

/** Starts a tap forwarding to `upstreamOrigin` (e.g. `http://127.0.0.1:8089`). */
export async function startLlamaTap(upstreamOrigin: string): Promise<LlamaTap> {
  const upstream = new URL(upstreamOrigin);
  const exchanges: TapExchange[] = [];
  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readAll(req);
    const exchange: TapExchange = {
      method: req.method ?? "GET", path: req.url ?? "/", requestBody: body.toString("utf8"),
      status: null, responseBody: "", upstreamError: null, startedAt: Date.now(), durationMs: null,
    };
    exchanges.push(exchange);
    const headers = { ...req.headers, host: upstream.host };
    const passed: Buffer[] = [];
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: exchange.method, path: exchange.path, headers }, (answer) => {
      exchange.status = answer.statusCode ?? null;
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.on("data", (chunk: Buffer) => {
        passed.push(chunk);
        res.write(chunk);
      });
      answer.on("end", () => {
        exchange.responseBody = Buffer.concat(passed).toString("utf8");
        exchange.durationMs = Date.now() - exchange.startedAt;
        res.end();
      });
      answer.on("error", (error) => {
        exchange.responseBody = Buffer.concat(passed).toString("utf8");
        exchange.upstreamError = error.message;
        exchange.durationMs = Date.now() - exchange.startedAt;
        res.destroy();
      });
    });
    out.on("error", (error) => {
      exchange.upstreamError = error.message;
      exchange.durationMs = Date.now() - exchange.startedAt;
      res.destroy();
    });
    // Lisa gave up (timeout, shutdown) or closed once she had the stream's `[DONE]`: let the server see the
    // disconnect too, and keep what passed through as the exchange's body.
    res.on("close", () => {
      if (res.writableFinished) return;
      exchange.responseBody = Buffer.concat(passed).toString("utf8");
      exchange.durationMs ??= Date.now() - exchange.startedAt;
      out.destroy();
    });
    out.end(body);
  };
  const server: Server = createServer((req, res) => {
    forward(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    exchanges,
    completions: () => exchanges.filter((e) => e.path.endsWith("/chat/completions")),
    inFlight: () => exchanges.filter((e) => e.durationMs === null),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
