// Translates ACP session/update frames into executor events: thoughts become
// reasoning (P-PRV-03), message ids and completion markers are kept (P-PRV-06),
// tool start/update frames merge into one envelope (P-CAP-06/07), and the
// agent's own notices become diagnostics, not reply text (issue 27), and a
// compaction the agent reports becomes `context_compacted`.
import type { ExecutorEvent, ToolEnvelope } from "../domain/executor-port.ts";

type Frame = { sessionUpdate: string; [k: string]: unknown };
type Channel = "text" | "reasoning";

const TERMINAL_TOOL = new Set(["completed", "failed"]);

function textOf(content: unknown): string {
  const c = content as { type?: string; text?: string } | undefined;
  return c?.type === "text" && typeof c.text === "string" ? c.text : "";
}

function commandOf(raw: unknown): string | null {
  const r = raw as { command?: unknown; cmd?: unknown } | null | undefined;
  const v = r?.command ?? r?.cmd;
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join(" ");
  return null;
}

function locationsOf(raw: unknown): string[] | null {
  if (!Array.isArray(raw)) return null;
  return raw.map((l) => (l as { path?: unknown }).path).filter((p): p is string => typeof p === "string");
}

/** True for codex-acp's marker of a context compaction item (`_meta: {contextCompaction: {version}}`). */
function isCompaction(meta: unknown): boolean {
  const c = (meta as { contextCompaction?: unknown } | null | undefined)?.contextCompaction;
  return c !== null && typeof c === "object";
}

/** Stateful per-turn translator. */
export class AcpEventTranslator {
  #open: Record<Channel, { messageId: string | null } | null> = { text: null, reasoning: null };
  #tools = new Map<string, ToolEnvelope>();

  /** Events for one session/update frame. */
  translate(frame: Frame): ExecutorEvent[] {
    const kind = frame.sessionUpdate;
    if (kind === "agent_message_chunk") return this.#chunk("text", frame);
    if (kind === "agent_thought_chunk") return this.#chunk("reasoning", frame);
    if (kind === "tool_call" || kind === "tool_call_update") return this.#tool(frame);
    if (kind === "current_mode_update" && typeof frame.currentModeId === "string") return [{ type: "mode_update", modeId: frame.currentModeId }];
    if (kind === "notice") return this.#notice(frame);
    return [];
  }

  /** Closes open messages and unsettled tools at the end of a turn. */
  finish(): ExecutorEvent[] {
    const out: ExecutorEvent[] = [];
    for (const channel of ["text", "reasoning"] as const) {
      const open = this.#open[channel];
      if (open) out.push({ type: "message_completed", channel, messageId: open.messageId });
      this.#open[channel] = null;
    }
    for (const env of this.#tools.values()) out.push({ type: "tool_end", envelope: { ...env }, settled: false });
    this.#tools.clear();
    return out;
  }

  #chunk(channel: Channel, frame: Frame): ExecutorEvent[] {
    const text = textOf(frame.content);
    const messageId = typeof frame.messageId === "string" ? frame.messageId : null;
    const out: ExecutorEvent[] = [];
    const open = this.#open[channel];
    if (open && open.messageId !== messageId) out.push({ type: "message_completed", channel, messageId: open.messageId });
    if (!open || open.messageId !== messageId) this.#open[channel] = { messageId };
    if (text.length > 0) out.push({ type: channel, messageId, text });
    return out;
  }

  /** A session notice (the client advertises `session.notices`, so agents send these instead of reply text). */
  #notice(frame: Frame): ExecutorEvent[] {
    const title = typeof frame.title === "string" ? frame.title.trim() : "";
    const description = typeof frame.description === "string" ? frame.description.trim() : "";
    const text = [title, description].filter((x) => x.length > 0).join(": ");
    if (text.length === 0) return [];
    const severity = typeof frame.severity === "string" && /^[a-z]{1,16}$/.test(frame.severity) ? frame.severity : "info";
    return [{ type: "diagnostic", severity, text }];
  }

  #tool(frame: Frame): ExecutorEvent[] {
    const id = frame.toolCallId;
    if (typeof id !== "string") return [];
    const known = this.#tools.get(id);
    const env: ToolEnvelope = known ?? { toolCallId: id, title: null, kind: null, status: null, locations: [], command: null };
    if (typeof frame.title === "string") env.title = frame.title;
    if (typeof frame.kind === "string") env.kind = frame.kind;
    if (typeof frame.status === "string") env.status = frame.status;
    const locs = locationsOf(frame.locations);
    if (locs) env.locations = locs;
    const cmd = commandOf(frame.rawInput);
    if (cmd !== null) env.command = cmd;
    const out: ExecutorEvent[] = [];
    if (!known) {
      this.#tools.set(id, env);
      out.push({ type: "tool_begin", envelope: { ...env, locations: [...env.locations] } });
    }
    if (env.status !== null && TERMINAL_TOOL.has(env.status)) {
      this.#tools.delete(id);
      out.push({ type: "tool_end", envelope: { ...env, locations: [...env.locations] }, settled: true });
      // codex-acp marks Codex's compaction (asked for, or its own) with `_meta.contextCompaction` (P-HIS-06).
      if (env.status === "completed" && isCompaction(frame._meta)) out.push({ type: "context_compacted" });
    }
    return out;
  }
}

/**
 * The turn's usage from an ACP prompt response's `usage` (ACP counts cache
 * reads and writes apart from `inputTokens`; the controller's inputTokens
 * include them, as Codex's do), or null when the agent reported none.
 */
export function acpUsage(v: unknown): Extract<ExecutorEvent, { type: "token_usage" }> | null {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return null;
  const u = v as Record<string, unknown>;
  const n = (x: unknown): number | null => (typeof x === "number" && Number.isSafeInteger(x) && x >= 0 ? x : null);
  const input = n(u.inputTokens);
  const output = n(u.outputTokens);
  const total = n(u.totalTokens);
  if (input === null || output === null || total === null) return null;
  const read = n(u.cachedReadTokens);
  const write = n(u.cachedWriteTokens) ?? 0;
  return { type: "token_usage", inputTokens: input + (read ?? 0) + write, cachedInputTokens: read, outputTokens: output, reasoningOutputTokens: n(u.thoughtTokens), totalTokens: total };
}
