import { err } from "../errors.ts";
import { toolFailure } from "./failures.ts";
import type { PreparedCall, ToolContext, ToolOutcome } from "./tool.ts";

/**
 * Runs a prepared call under the caller's signal combined with a per-tool
 * deadline. The race guarantees the caller gets an answer by the deadline even
 * if a tool ignores its signal; the timer is always cleared.
 */
export async function runWithDeadline(
  call: PreparedCall,
  deadlineMs: number,
  callerSignal: AbortSignal,
  context: Omit<ToolContext, "signal">,
): Promise<ToolOutcome> {
  if (callerSignal.aborted) return err(toolFailure("cancelled"));
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DOMException("tool deadline", "TimeoutError")), deadlineMs);
  const signal = AbortSignal.any([callerSignal, deadline.signal]);
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<ToolOutcome>((resolve) => {
    onAbort = () => resolve(err(callerSignal.aborted ? toolFailure("cancelled") : toolFailure("timeout", true)));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  const running = call({ ...context, signal });
  // A tool that settles after losing the race must not cause an unhandled rejection.
  running.catch(() => undefined);
  try {
    return await Promise.race([running, aborted]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}
