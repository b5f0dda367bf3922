// The web client's own undici Agent and its policy-checking connector. Every
// new connection goes through `connect`: IP literals are decided directly,
// names are resolved once by the guarded lookup, every resolved address is
// decided, and the socket connects to exactly those checked addresses.
import type { LookupAddress, LookupOptions } from "node:dns";
import { isIP } from "node:net";
import { Agent, buildConnector } from "undici";
import type { WebConfig } from "../config/types.ts";
import type { AddressPolicy, LookupFn } from "./address-policy.ts";
import { WebError } from "./errors.ts";

/** Concurrent connections per origin for model-selected downloads. */
export const WEB_CONNECTIONS_PER_ORIGIN = 2;
/** Largest accepted response header block, in bytes. */
export const WEB_MAX_HEADER_BYTES = 16 * 1024;
// Idle keep-alive sockets are dropped quickly: downloads are occasional.
const KEEP_ALIVE_TIMEOUT_MS = 4_000;
const KEEP_ALIVE_MAX_TIMEOUT_MS = 10_000;

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

/** Options for the underlying socket connector. TLS verification is left at Node's default (on). */
export function connectorOptions(config: WebConfig, policy: AddressPolicy, lookup: LookupFn): buildConnector.BuildOptions {
  return {
    timeout: secondsToMs(config.connect_timeout_seconds),
    lookup: guardedLookup(policy, lookup),
    allowH2: false,
  };
}

/** A connector that applies the address policy to IP literals and (via the lookup) to resolved names. */
export function createGuardedConnector(config: WebConfig, policy: AddressPolicy, lookup: LookupFn): buildConnector.connector {
  const connect = buildConnector(connectorOptions(config, policy, lookup));
  return (options, callback) => {
    // IP literal hosts never reach the lookup, so they are decided here.
    if (isIP(options.hostname) !== 0 && !policy.decide(options.hostname, options.hostname).allowed) {
      callback(new WebError("address_blocked"), null);
      return;
    }
    connect(options, callback);
  };
}

/** Options of the web Agent: no proxy, no cookies, low connection limits, read and size bounds. */
export function webAgentOptions(config: WebConfig, connect: buildConnector.connector): Agent.Options {
  const readMs = secondsToMs(config.read_timeout_seconds);
  return {
    connect,
    connections: WEB_CONNECTIONS_PER_ORIGIN,
    pipelining: 1,
    headersTimeout: readMs,
    bodyTimeout: readMs,
    maxHeaderSize: WEB_MAX_HEADER_BYTES,
    maxResponseSize: config.max_download_bytes,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    keepAliveMaxTimeout: KEEP_ALIVE_MAX_TIMEOUT_MS,
    allowH2: false,
  };
}

/** The dedicated web Agent. A plain Agent never reads HTTP(S)_PROXY and keeps no cookies. */
export function createWebAgent(config: WebConfig, policy: AddressPolicy, lookup: LookupFn): Agent {
  return new Agent(webAgentOptions(config, createGuardedConnector(config, policy, lookup)));
}
