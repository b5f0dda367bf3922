// The web client's own HttpClient and its policy-checking connection guard.
// Every new connection goes through it: IP literals are decided directly,
// names are resolved once by the guarded lookup bound to the socket, every
// resolved address is decided, and the socket connects to exactly those
// checked addresses.
import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import type { WebConfig } from "../config/types.ts";
import { HttpClient, type HostGuard, type HttpClientOptions } from "../http/client.ts";
import type { AddressPolicy, LookupFn } from "./address-policy.ts";
import { WebError } from "./errors.ts";

/** Concurrent connections per origin for model-selected downloads. */
export const WEB_CONNECTIONS_PER_ORIGIN = 2;
/** Largest accepted response header block, in bytes. */
export const WEB_MAX_HEADER_BYTES = 16 * 1024;
// Idle keep-alive sockets are dropped quickly: downloads are occasional.
const KEEP_ALIVE_TIMEOUT_MS = 4_000;

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Converts configured seconds to whole milliseconds (at least 1). */
export function secondsToMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000));
}

function notFound(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`no address for host`), { code: "ENOTFOUND", hostname });
}

/**
 * A `net.connect` lookup that resolves with `lookup`, refuses the whole
 * connection when ANY resolved address is blocked (a name that mixes public
 * and private addresses is refused rather than filtered), and hands only the
 * checked addresses to the socket.
 */
export function guardedLookup(policy: AddressPolicy, lookup: LookupFn) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(hostname).then(
      (found) => {
        for (const entry of found) {
          if (!policy.decide(hostname, entry.address).allowed) return callback(new WebError("address_blocked"), "");
        }
        const wanted = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        const first = wanted[0];
        if (first === undefined) return callback(notFound(hostname), "");
        if (options.all === true) return callback(null, wanted.map((a) => ({ address: a.address, family: a.family })));
        return callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : notFound(hostname), ""),
    );
  };
}

/** Options for the socket of every new connection. TLS verification is left at Node's default (on). */
export function connectorOptions(config: WebConfig, policy: AddressPolicy, lookup: LookupFn): { readonly timeout: number; readonly lookup: LookupFunction } {
  return {
    timeout: secondsToMs(config.connect_timeout_seconds),
    lookup: guardedLookup(policy, lookup) as LookupFunction,
  };
}

/** The guard for IP literal hosts, which never reach the lookup. */
export function literalGuard(policy: AddressPolicy): HostGuard {
  return (host) => (isIP(host) !== 0 && !policy.decide(host, host).allowed ? new WebError("address_blocked") : null);
}

/** Options of the web client: no proxy, no cookies, low connection limits, read and size bounds. */
export function webAgentOptions(config: WebConfig, guardHost: HostGuard, lookup?: LookupFunction): HttpClientOptions {
  const readMs = secondsToMs(config.read_timeout_seconds);
  return {
    connectTimeout: secondsToMs(config.connect_timeout_seconds),
    connections: WEB_CONNECTIONS_PER_ORIGIN,
    headersTimeout: readMs,
    bodyTimeout: readMs,
    maxHeaderSize: WEB_MAX_HEADER_BYTES,
    maxResponseSize: config.max_download_bytes,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    guardHost,
    ...(lookup === undefined ? {} : { lookup }),
  };
}

/** The dedicated web client. It never reads HTTP(S)_PROXY, keeps no cookies and decodes nothing. */
export function createWebAgent(config: WebConfig, policy: AddressPolicy, lookup: LookupFn): HttpClient {
  return new HttpClient(webAgentOptions(config, literalGuard(policy), connectorOptions(config, policy, lookup).lookup));
}
