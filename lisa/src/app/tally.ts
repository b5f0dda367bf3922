import type { LogFields, Logger } from "../log/logger.ts";

// Counters and timings for the periodic summary, derived from
// the structured events every module already logs: no module keeps global
// counters, and a counted event is always also a logged event.

interface Stat {
  count: number;
  sumMs: number;
  maxMs: number;
}

const TIMED = ["invocation_answered", "invocation_failed", "llm_request_done", "tool_call_finished"] as const;

/** Tallies log events between summaries. */
export class EventTally {
  readonly #counts = new Map<string, number>();
  readonly #timings = new Map<string, Stat>();
  #webBytes = 0;
  #webRedirects = 0;

  /** A logger that tallies every event (at any level) before passing it on. */
  wrap(log: Logger): Logger {
    const observe = (event: string, fields?: LogFields): void => this.#observe(event, fields);
    return {
      debug: (event, fields) => (observe(event, fields), log.debug(event, fields)),
      info: (event, fields) => (observe(event, fields), log.info(event, fields)),
      warn: (event, fields) => (observe(event, fields), log.warn(event, fields)),
      error: (event, fields) => (observe(event, fields), log.error(event, fields)),
      child: (bindings) => this.wrap(log.child(bindings)),
    };
  }

  /** Flat summary fields since the last call; resets the tally. */
  drain(): LogFields {
    const c = (event: string): number => this.#counts.get(event) ?? 0;
    const timing = (event: string): Stat => this.#timings.get(event) ?? { count: 0, sumMs: 0, maxMs: 0 };
    const avg = (stat: Stat): number => (stat.count === 0 ? 0 : Math.round(stat.sumMs / stat.count));
    const answered = timing("invocation_answered");
    const failed = timing("invocation_failed");
    const fields: LogFields = {
      invocations_accepted: c("invocation_accepted"),
      invocations_ignored: c("invocation_ignored"),
      invocations_answered: answered.count,
      invocations_failed: failed.count,
      invocations_sent: c("invocation_sent"),
      send_pending_events: c("send_pending"),
      send_rejected_events: c("send_rejected"),
      invocation_avg_ms: avg({ count: answered.count + failed.count, sumMs: answered.sumMs + failed.sumMs, maxMs: 0 }),
      invocation_max_ms: Math.max(answered.maxMs, failed.maxMs),
      llm_requests: c("llm_request_done") + c("llm_request_failed"),
      llm_failures: c("llm_request_failed"),
      llm_retries: c("llm_retry"),
      llm_avg_ms: avg(timing("llm_request_done")),
      tool_calls: c("tool_call_finished"),
      tool_failures: c("tool_call_failed"),
      tool_timeouts: c("tool_call_timeout"),
      tool_avg_ms: avg(timing("tool_call_finished")),
      web_fetches: c("web_fetch_succeeded") + c("web_fetch_failed"),
      web_bytes: this.#webBytes,
      web_redirects: this.#webRedirects,
      timeline_gaps: c("matrix_timeline_gap"),
      unknown_positions: c("matrix_unknown_pos"),
      worker_crashes: c("room_worker_crashed"),
    };
    this.#counts.clear();
    this.#timings.clear();
    this.#webBytes = 0;
    this.#webRedirects = 0;
    return fields;
  }

  #observe(event: string, fields: LogFields | undefined): void {
    this.#bump(event);
    if (event === "tool_call_finished" && fields?.["ok"] === false) {
      this.#bump("tool_call_failed");
      if (fields["code"] === "timeout") this.#bump("tool_call_timeout");
    }
    if (event === "web_fetch_succeeded") {
      this.#webBytes += numberField(fields, "bytes");
      this.#webRedirects += numberField(fields, "redirects");
    }
    if ((TIMED as readonly string[]).includes(event)) {
      const ms = numberField(fields, "duration_ms");
      const stat = this.#timings.get(event) ?? { count: 0, sumMs: 0, maxMs: 0 };
      stat.count += 1;
      stat.sumMs += ms;
      stat.maxMs = Math.max(stat.maxMs, ms);
      this.#timings.set(event, stat);
    }
  }

  #bump(key: string): void {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }
}

function numberField(fields: LogFields | undefined, key: string): number {
  const value = fields?.[key];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
