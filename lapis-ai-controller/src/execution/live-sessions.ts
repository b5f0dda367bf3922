// The agent sessions an executor keeps open between turns, one per thread
// session key, each with the tool grant and the external MCP sources (mcp
// endpoints) it was opened with. Both executors keep theirs here, so ending
// one, stopping those an endpoint took away and closing them all behave alike.
import type { ToolGrant } from "./tool-bridge.ts";

/** What the registry needs of an agent session. */
export interface EndableSession {
  close(): Promise<void>;
  /** Stops the session at once; a prompt in flight ends with `code`. */
  abort(code: string): Promise<void>;
}

/** One open session and what it was opened with. */
export interface LiveSession<S> {
  /** What the session was opened for; another fingerprint needs another session. */
  readonly fp: string;
  readonly session: S;
  readonly grant: ToolGrant | null;
  /** The mcp endpoints whose servers this session launched. */
  readonly sources: readonly string[];
}

/** The open sessions of one executor. */
export class LiveSessions<S extends EndableSession> {
  readonly #byKey = new Map<string, LiveSession<S>>();

  get(key: string): LiveSession<S> | undefined {
    return this.#byKey.get(key);
  }

  set(key: string, live: LiveSession<S>): void {
    this.#byKey.set(key, live);
  }

  /** Ends the session kept under `key`, if any: its grant is revoked, then it is closed. */
  async end(key: string): Promise<void> {
    const live = this.#byKey.get(key);
    if (live === undefined) return;
    this.#byKey.delete(key);
    live.grant?.revoke();
    await live.session.close();
  }

  /**
   * An `mcp` endpoint is gone (disposed, or its connection closed): every
   * session whose servers came from it is stopped at once, with the agent and
   * the servers it launched; a turn in flight fails `endpoint_disconnected`.
   * Answers how many sessions were stopped.
   */
  async revokeSource(source: string): Promise<number> {
    const hit = [...this.#byKey].filter(([, live]) => live.sources.includes(source));
    for (const [key, live] of hit) {
      this.#byKey.delete(key);
      live.grant?.revoke();
    }
    await Promise.all(hit.map(([, live]) => live.session.abort("endpoint_disconnected")));
    return hit.length;
  }

  /** Closes every open session. */
  async closeAll(): Promise<void> {
    const all = [...this.#byKey.values()];
    this.#byKey.clear();
    for (const live of all) live.grant?.revoke();
    await Promise.all(all.map((live) => live.session.close()));
  }
}
