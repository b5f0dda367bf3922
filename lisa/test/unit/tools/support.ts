// Shared helpers for the tool tests: configuration, a scriptable fake
// fetcher, and a session opened with a recording logger.
import type { AppConfig } from "../../../src/config/types.ts";
import type { Result } from "../../../src/errors.ts";
import type { FetchPage } from "../../../src/tools/fetch_web_page.ts";
import { Semaphore } from "../../../src/invocation/semaphore.ts";
import type { ToolResult, ToolSession } from "../../../src/tools/port.ts";
import { createToolSessionFactory, type ToolSessionDeps } from "../../../src/tools/session.ts";
import type { FetchedPage } from "../../../src/web/fetch.ts";
import { WebError } from "../../../src/web/errors.ts";
import { type ConfigOverrides, writeTestConfig } from "../../support/config.ts";
import { recordingLogger, type LogLine } from "../../support/hostile-web.ts";

/** A signal that never aborts. */
export const NEVER: AbortSignal = new AbortController().signal;

/** A loaded test configuration (loopback search endpoint, canary secrets). */
export function toolConfig(overrides: ConfigOverrides = {}): AppConfig {
  return writeTestConfig(overrides).config;
}

/** A downloaded HTML page as the fetcher would return it. */
export function htmlPage(finalUrl: string, html: string, charset: string | null = "utf-8"): FetchedPage {
  return { finalUrl, status: 200, contentType: "text/html", charset, bytes: Buffer.from(html, "utf8"), redirects: 0 };
}

/** A downloaded plain-text page. */
export function textPage(finalUrl: string, bytes: Uint8Array, charset: string | null = null): FetchedPage {
  return { finalUrl, status: 200, contentType: "text/plain", charset, bytes, redirects: 0 };
}

/** What the fake fetcher answers for a URL. */
export type FakeAnswer = FetchedPage | WebError | "hang";

/** A FetchPage that answers from a table and records the URLs it was asked for. */
export function fakeFetcher(answers: Readonly<Record<string, FakeAnswer>>): FetchPage & { readonly calls: string[] } {
  const calls: string[] = [];
  const fetchPage = async (url: string, signal: AbortSignal): Promise<Result<FetchedPage, WebError>> => {
    calls.push(url);
    const answer = answers[url];
    if (answer === undefined) return { ok: false, error: new WebError("http_error", { status: 404 }) };
    if (answer === "hang") {
      return new Promise((resolve) => {
        signal.addEventListener("abort", () => resolve({ ok: false, error: new WebError("cancelled") }), { once: true });
      });
    }
    return answer instanceof WebError ? { ok: false, error: answer } : { ok: true, value: answer };
  };
  return Object.assign(fetchPage, { calls });
}

/** A session plus the log lines its factory recorded. */
export interface OpenedSession {
  readonly session: ToolSession;
  readonly lines: LogLine[];
  /** Opens another session from the same factory. */
  readonly another: () => ToolSession;
}

/** Opens a tool session over `config` with a recording logger. */
export function openSession(
  config: AppConfig,
  fetchPage: FetchPage = fakeFetcher({}),
  extra: Partial<Pick<ToolSessionDeps, "pandoc" | "conversionSlots">> = {},
): OpenedSession {
  const log = recordingLogger();
  const conversionSlots = new Semaphore(config.web.pandoc_max_concurrent);
  const factory = createToolSessionFactory({ search: config.search, web: config.web, fetchPage, log, conversionSlots, ...extra });
  return { session: factory(), lines: log.lines, another: factory };
}

/** Calls a tool with an argument object serialised as JSON. */
export function call(session: ToolSession, name: string, args: unknown, signal: AbortSignal = NEVER): Promise<ToolResult> {
  return session.execute(name, JSON.stringify(args), signal);
}

/** The parsed failure JSON (`ok: false`, code, message, retryable) of a failed result. */
export function failureJson(result: ToolResult): { ok: boolean; code: string; message: string; retryable: boolean } {
  return JSON.parse(result.content) as { ok: boolean; code: string; message: string; retryable: boolean };
}

/** The text between the untrusted-data tags of a successful result. */
export function untrustedBody(result: ToolResult): string {
  const start = result.content.indexOf(">\n", result.content.indexOf("<untrusted_data"));
  const end = result.content.lastIndexOf("\n</untrusted_data>");
  return result.content.slice(start + 2, end);
}
