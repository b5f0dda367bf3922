import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Secret } from "../../../src/config/secret.ts";
import type { LogFields, Logger } from "../../../src/log/logger.ts";
import { createMatrixClient, type MatrixClient, type MatrixClientOptions } from "../../../src/matrix/client.ts";

// A tiny scripted node:http server on 127.0.0.1 that records every request,
// plus helpers to build a Matrix client against it. Not a homeserver fake:
// each test scripts exactly the responses it needs.

/** One request as the server saw it. */
export interface Recorded {
  readonly method: string;
  /** Raw request target (path and query string). */
  readonly url: string;
  readonly pathname: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  readonly body: unknown;
}

/** A scripted reply; `destroy` drops the connection without a response, `hang` never answers. */
export interface Reply {
  readonly status?: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly headers?: Record<string, string>;
  readonly destroy?: boolean;
  readonly hang?: boolean;
}

/** Decides the reply to one request. */
export type Handler = (request: Recorded) => Reply | Promise<Reply>;

/** A running scripted server. */
export interface ScriptedServer {
  readonly url: string;
  readonly requests: Recorded[];
  /** Requests whose path ends with `suffix` (method optional). */
  hits(suffix: string, method?: string): Recorded[];
  close(): Promise<void>;
}

function parse(text: string): unknown {
  try {
    return text === "" ? null : (JSON.parse(text) as unknown);
  } catch {
    return null;
  }
}

function write(res: ServerResponse, reply: Reply): void {
  const body = reply.text ?? (reply.json === undefined ? "{}" : JSON.stringify(reply.json));
  res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers });
  res.end(body);
}

/** Starts a scripted server on an ephemeral 127.0.0.1 port. */
export async function startServer(handler: Handler): Promise<ScriptedServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = req.url ?? "/";
      const parsed = new URL(url, "http://127.0.0.1");
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const recorded: Recorded = {
        method: req.method ?? "GET", url, pathname: parsed.pathname, query: parsed.searchParams,
        headers: req.headers, rawBody, body: parse(rawBody),
      };
      requests.push(recorded);
      void Promise.resolve(handler(recorded)).then((reply) => {
        if (reply.destroy === true) req.socket.destroy();
        else if (reply.hang !== true) write(res, reply);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hits: (suffix, method) => requests.filter((r) => r.pathname.endsWith(suffix) && (method === undefined || r.method === method)),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Test identity. */
export const USER = "@lisa:localhost";
/** Stable test device id. */
export const DEVICE = "LISATEST";
/** Test device display name. */
export const DISPLAY_NAME = "Lisa test bot";
/** Test password: it must never appear in errors or logs. */
export const PASSWORD = "canary-unit-password-5d1e77";
/** An allowed test room. */
export const ROOM = "!room1:localhost";

/** A logger that records every line (event name plus fields) as JSON text. */
export function captureLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const make = (bindings: LogFields): Logger => {
    const at = (level: string) => (event: string, fields?: LogFields): void => {
      lines.push(JSON.stringify({ level, event, ...bindings, ...fields }));
    };
    return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), child: (b) => make({ ...bindings, ...b }) };
  };
  return { log: make({}), lines };
}

/** A client for `url` with fast, jitter-free retries; returns its captured log lines too. */
export function makeClient(url: string, options: Partial<MatrixClientOptions> = {}): { client: MatrixClient; lines: string[] } {
  const captured = captureLogger();
  const client = createMatrixClient(
    { homeserverUrl: url, userId: USER, deviceId: DEVICE, deviceDisplayName: DISPLAY_NAME, password: new Secret("matrix.password", PASSWORD) },
    { log: captured.log, requestTimeoutMs: 5_000, ...options, retry: { baseDelayMs: 1, maxDelayMs: 5, jitterRatio: 0, ...options.retry } },
  );
  return { client, lines: captured.lines };
}

/** A well-formed client event. */
export function ev(eventId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: eventId, type: "m.room.message", sender: "@alice:localhost", origin_server_ts: 1_700_000_000_000,
    content: { msgtype: "m.text", body: "hi" }, ...extra,
  };
}

/** Path of a v3 client endpoint. */
export const v3 = (path: string): string => `/_matrix/client/v3${path}`;

/**
 * Minimal login endpoints: `GET /login` offers password login, `POST /login` issues `token-N`
 * (plus `refresh-N` when `refreshable`), `/whoami` answers for tokens in `valid`.
 */
export interface AuthScript {
  refreshable: boolean;
  expiresInMs?: number;
  /** Access tokens the server currently accepts. */
  readonly valid: Set<string>;
  issued: number;
}

/** Replies to `/login`, `/refresh` and `/whoami`, or null for other paths. */
export function authReply(script: AuthScript, request: Recorded): Reply | null {
  const { pathname, method } = request;
  if (pathname === v3("/login") && method === "GET") return { json: { flows: [{ type: "m.login.password" }] } };
  if (pathname === v3("/login") && method === "POST") {
    script.issued += 1;
    const access = `token-${script.issued}`;
    script.valid.add(access);
    const extra = script.refreshable ? { refresh_token: `refresh-${script.issued}`, expires_in_ms: script.expiresInMs ?? 3_600_000 } : {};
    return { json: { user_id: USER, device_id: DEVICE, access_token: access, ...extra } };
  }
  if (pathname === v3("/refresh")) {
    script.issued += 1;
    const access = `token-${script.issued}`;
    script.valid.add(access);
    return { json: { access_token: access, refresh_token: `refresh-${script.issued}`, expires_in_ms: script.expiresInMs ?? 3_600_000 } };
  }
  if (pathname === v3("/account/whoami")) {
    return tokenOf(request) !== null && script.valid.has(tokenOf(request) ?? "")
      ? { json: { user_id: USER, device_id: DEVICE } }
      : unknownToken();
  }
  return null;
}

/** The bearer token of a request, or null. */
export function tokenOf(request: Recorded): string | null {
  const header = request.headers.authorization;
  return header?.startsWith("Bearer ") === true ? header.slice("Bearer ".length) : null;
}

/** A 401 `M_UNKNOWN_TOKEN` reply. */
export function unknownToken(softLogout = false): Reply {
  return { status: 401, json: { errcode: "M_UNKNOWN_TOKEN", error: "Unknown token", soft_logout: softLogout } };
}

/** A fresh auth script. */
export function authScript(refreshable: boolean, expiresInMs?: number): AuthScript {
  return { refreshable, valid: new Set<string>(), issued: 0, ...(expiresInMs === undefined ? {} : { expiresInMs }) };
}
