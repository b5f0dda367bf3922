// A deliberately plain HTTP client (global fetch) for tests that check the fake
// homeserver itself, independent of Lisa's Matrix client.

import { after, before } from "node:test";
import { startFakeHomeserver, type FakeHomeserver } from "../fake-homeserver.ts";
import type { HomeserverProfile } from "./types.ts";

/** A decoded response. `body` is loosely typed JSON so tests can assert on wire shapes. */
export interface RawResponse {
  readonly status: number;
  // Loose on purpose: tests assert exact wire shapes with deepEqual.
  readonly body: any;
  readonly headers: Headers;
}

/** Options of `call`. */
export interface CallOptions {
  readonly token?: string;
  readonly body?: unknown;
  readonly query?: Readonly<Record<string, string | number>>;
  readonly signal?: AbortSignal;
}

/** One request against the fake; rejects on a dropped connection. */
export async function call(server: FakeHomeserver, method: string, path: string, options: CallOptions = {}): Promise<RawResponse> {
  const url = new URL(path, server.url);
  for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, String(value));
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const init: RequestInit = { method, headers, signal: options.signal ?? AbortSignal.timeout(15_000) };
  if (options.body !== undefined) init.body = JSON.stringify(options.body);
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text === "" ? null : JSON.parse(text), headers: response.headers };
}

/** Percent-encodes one path segment (room ids, event ids, user ids). */
export const seg = encodeURIComponent;

/** The v3 client API prefix. */
export const V3 = "/_matrix/client/v3";

/** Logs in with m.id.user; returns the response body (asserting 200). */
export async function login(server: FakeHomeserver, user: string, password: string, extra: Readonly<Record<string, unknown>> = {}): Promise<any> {
  const res = await call(server, "POST", `${V3}/login`, {
    body: { type: "m.login.password", identifier: { type: "m.id.user", user }, password, ...extra },
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** `GET /sync` with the given query; returns the raw response. */
export function sync(server: FakeHomeserver, token: string, query: Readonly<Record<string, string | number>> = {}): Promise<RawResponse> {
  return call(server, "GET", `${V3}/sync`, { token, query });
}

/** A fake homeserver shared by one describe block, with `userId` logged in (device LISADEV); set in `before`. */
export interface LoggedInServer {
  hs: FakeHomeserver;
  token: string;
}

/** Registers before/after hooks that start the server, log `userId` in (password "pw") and close it. */
export function loggedInServer(profile: HomeserverProfile, userId: string): LoggedInServer {
  const ctx = {} as LoggedInServer;
  before(async () => {
    ctx.hs = await startFakeHomeserver({ profile });
    ctx.hs.addUser(userId, "pw");
    ctx.token = (await login(ctx.hs, userId, "pw", { device_id: "LISADEV" })).access_token;
  });
  after(() => ctx.hs.close());
  return ctx;
}
