// One hostile web server and the fetchers made against it, per test file.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import type { WebConfig } from "../../src/config/types.ts";
import type { Logger } from "../../src/log/logger.ts";
import type { LookupFn } from "../../src/web/address-policy.ts";
import type { WebError } from "../../src/web/errors.ts";
import { createWebFetcher, type WebFetcher } from "../../src/web/fetch.ts";
import { hostileWebConfig, recordingLogger, startHostileWeb, type HostileWeb } from "./hostile-web.ts";

/** The hostile server (set in `before`) and helpers that close what they create in `after`. */
export interface WebSuite {
  readonly web: HostileWeb;
  /** A fetcher with the small test limits plus `overrides`, an optional injected resolver and logger. */
  fetcher(overrides?: Partial<WebConfig>, lookup?: LookupFn, log?: Logger): WebFetcher;
  /** Fetches `url`, asserts that it fails, and returns the error. */
  failureOf(f: WebFetcher, url: string, signal?: AbortSignal): Promise<WebError>;
}

/** Registers before/after hooks that start the hostile server and close it and every fetcher. */
export function webSuite(): WebSuite {
  let web: HostileWeb | undefined;
  const fetchers: WebFetcher[] = [];
  before(async () => {
    web = await startHostileWeb();
  });
  after(async () => {
    for (const f of fetchers) await f.close();
    await web?.close();
  });
  return {
    get web(): HostileWeb {
      if (web === undefined) throw new Error("the hostile web server starts in before()");
      return web;
    },
    fetcher(overrides = {}, lookup, log = recordingLogger()) {
      const created = createWebFetcher(hostileWebConfig(overrides), lookup === undefined ? { log } : { log, lookup });
      fetchers.push(created);
      return created;
    },
    async failureOf(f, url, signal = AbortSignal.timeout(10_000)) {
      const result = await f.fetch(url, signal);
      assert.equal(result.ok, false, `expected ${url} to fail`);
      if (result.ok) throw new Error("unreachable");
      return result.error;
    },
  };
}
