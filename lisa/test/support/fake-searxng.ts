// A fake SearXNG instance on 127.0.0.1 speaking the JSON search API
// (GET /search?q=...&format=json), scriptable per test and recording every
// request. `close()` releases all sockets, including stalled ones.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One result as SearXNG returns it. */
export interface FakeSearchResult {
  readonly url: string;
  readonly title: string;
  readonly content: string;
  readonly engine?: string;
  readonly score?: number;
  readonly category?: string;
}

/** How the fake answers the next requests. */
export type FakeSearxngBehaviour =
  | { readonly kind: "results"; readonly results: readonly FakeSearchResult[] }
  | { readonly kind: "json_disabled" }
  | { readonly kind: "rate_limited" }
  | { readonly kind: "slow" }
  | { readonly kind: "malformed"; readonly body?: string }
  /** A valid body padded to about `bytes`; `chunked` omits Content-Length. */
  | { readonly kind: "oversized"; readonly bytes: number; readonly chunked?: boolean }
  | { readonly kind: "redirect"; readonly location: string }
  | { readonly kind: "status"; readonly status: number };

/** One recorded request. */
export interface FakeSearxngRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
}

/** A running fake SearXNG. */
export interface FakeSearxng {
  /** The search endpoint URL, e.g. `http://127.0.0.1:40123/search`. */
  readonly endpoint: string;
  readonly requests: readonly FakeSearxngRequest[];
  /** Sets the behaviour for all following requests. */
  respondWith(behaviour: FakeSearxngBehaviour): void;
  close(): Promise<void>;
}

/** A plausible SearXNG result for `index`. */
export function sampleResult(index: number, overrides: Partial<FakeSearchResult> = {}): FakeSearchResult {
  return {
    url: `https://example.test/article-${index}`,
    title: `Article ${index}`,
    content: `Snippet of article ${index}.`,
    engine: "duckduckgo",
    score: 1 / (index + 1),
    category: "general",
    ...overrides,
  };
}

function searchBody(query: string, results: readonly FakeSearchResult[]): string {
  return JSON.stringify({
    query,
    number_of_results: results.length,
    results: results.map((result) => ({
      engines: [result.engine ?? "duckduckgo"],
      positions: [1],
      parsed_url: ["https", "example.test", "/", "", "", ""],
      template: "default.html",
      publishedDate: null,
      thumbnail: null,
      ...result,
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: [],
  });
}

function answer(response: ServerResponse, behaviour: FakeSearxngBehaviour, query: string): void {
  const json = { "content-type": "application/json; charset=utf-8" };
  switch (behaviour.kind) {
    case "results":
      response.writeHead(200, json).end(searchBody(query, behaviour.results));
      return;
    case "json_disabled":
      response.writeHead(403, { "content-type": "text/html" }).end("<html><body>403 Forbidden</body></html>");
      return;
    case "rate_limited":
      response.writeHead(429, { "content-type": "text/plain" }).end("Too Many Requests");
      return;
    case "slow":
      return; // never answers; the socket is destroyed on close()
    case "malformed":
      response.writeHead(200, json).end(behaviour.body ?? '{"query": "x", "results": [');
      return;
    case "oversized": {
      const body = searchBody(query, [sampleResult(0, { content: "z".repeat(behaviour.bytes) })]);
      if (behaviour.chunked !== true) {
        response.writeHead(200, json).end(body);
        return;
      }
      response.writeHead(200, json);
      for (let offset = 0; offset < body.length; offset += 65_536) response.write(body.slice(offset, offset + 65_536));
      response.end();
      return;
    }
    case "redirect":
      response.writeHead(302, { location: behaviour.location }).end();
      return;
    case "status":
      response.writeHead(behaviour.status, { "content-type": "text/plain" }).end("error");
      return;
  }
}

/** Starts a fake SearXNG on an ephemeral 127.0.0.1 port, answering with `initial` until told otherwise. */
export async function startFakeSearxng(
  initial: FakeSearxngBehaviour = { kind: "results", results: [sampleResult(1), sampleResult(2)] },
): Promise<FakeSearxng> {
  let behaviour = initial;
  const requests: FakeSearxngRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    requests.push({
      method: request.method ?? "",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
    });
    if (url.pathname !== "/search") {
      response.writeHead(404).end();
      return;
    }
    answer(response, behaviour, url.searchParams.get("q") ?? "");
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}/search`,
    requests,
    respondWith(next) {
      behaviour = next;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
