// Translates app-server notifications of one turn into executor events: agent
// message deltas become text and reasoning deltas reasoning, each keyed by
// its item id as the message id, closed by the item's completion. Deltas of
// one item that arrived in the same read are merged into one event (flush()
// at the end of each read), so streaming adds no delay and a burst costs one
// journal write instead of one per token; tool-like
// items become one envelope from `item/started` to `item/completed`; Codex's
// warnings and errors become diagnostics, never reply text. An agent message
// or a reasoning item that completes without a delta still reaches the
// application: its text becomes one block of its channel (the real
// llama-server's reasoning deltas carry no `content_index`, so Codex drops
// them and reports only the completed item).
import type { ExecutorEvent, ToolEnvelope } from "../domain/executor-port.ts";
import { COMPACTION_ITEM_TYPE, TOOL_ITEM_TYPES } from "./codex-wire.ts";

type Channel = "text" | "reasoning";
type Item = { type?: unknown; id?: unknown; [k: string]: unknown };

const TOOL_TYPES: ReadonlySet<string> = new Set(TOOL_ITEM_TYPES);
/** Codex's item statuses in the envelope vocabulary the ACP path uses. */
const STATUS: Readonly<Record<string, string>> = { inProgress: "in_progress", completed: "completed", failed: "failed", declined: "failed" };
const KIND: Readonly<Record<string, string>> = { commandExecution: "execute", fileChange: "edit", mcpToolCall: "other", dynamicToolCall: "other", webSearch: "fetch" };
const MAX_DIAGNOSTIC = 2_000;

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function record(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function envelopeOf(item: Item, id: string, type: string): ToolEnvelope {
  const changes = Array.isArray(item.changes) ? item.changes : [];
  const locations = changes.map((c) => str(record(c).path)).filter((p): p is string => p !== null);
  const command = type === "commandExecution" ? str(item.command) : null;
  const title = type === "mcpToolCall" ? `${str(item.server) ?? ""}.${str(item.tool) ?? ""}`
    : type === "dynamicToolCall" ? str(item.tool)
      : type === "webSearch" ? str(item.query)
        : command ?? (locations.length > 0 ? locations.join(", ") : null);
  const status = str(item.status);
  return { toolCallId: id, title, kind: KIND[type] ?? null, status: status === null ? null : STATUS[status] ?? status, locations, command };
}

type Breakdown = { inputTokens: number; cachedInputTokens: number; outputTokens: number; reasoningOutputTokens: number; totalTokens: number };

const BREAKDOWN_KEYS = ["inputTokens", "cachedInputTokens", "outputTokens", "reasoningOutputTokens", "totalTokens"] as const;

/** Codex's TokenUsageBreakdown, when every figure is a non-negative integer. */
function breakdown(v: Record<string, unknown>): Breakdown | null {
  const out: Partial<Breakdown> = {};
  for (const k of BREAKDOWN_KEYS) {
    const n = v[k];
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) return null;
    out[k] = n;
  }
  return out as Breakdown;
}

function minus(a: Breakdown, b: Breakdown): Breakdown {
  const out: Partial<Breakdown> = {};
  for (const k of BREAKDOWN_KEYS) out[k] = Math.max(0, a[k] - b[k]);
  return out as Breakdown;
}

/** Stateful per-turn translator; notifications of other threads or turns are dropped by the caller. */
export class CodexEventTranslator {
  #open: Record<Channel, string | null> = { text: null, reasoning: null };
  #tools = new Map<string, ToolEnvelope>();
  #pending: { channel: Channel; messageId: string | null; text: string } | null = null;
  /** Item ids that streamed at least one delta this turn (their completion adds no text). */
  #streamed = new Set<string>();
  #usageBase: Breakdown | null = null;

  /** Events for one notification (a delta may be held until flush()). */
  translate(method: string, params: unknown): ExecutorEvent[] {
    if (method === "item/agentMessage/delta") return this.#delta("text", record(params));
    if (method === "item/reasoning/summaryTextDelta" || method === "item/reasoning/textDelta") return this.#delta("reasoning", record(params));
    return [...this.flush(), ...this.#other(method, record(params))];
  }

  /** The merged delta held so far, if any. */
  flush(): ExecutorEvent[] {
    const p = this.#pending;
    this.#pending = null;
    return p === null ? [] : [{ type: p.channel, messageId: p.messageId, text: p.text }];
  }

  #other(method: string, p: Record<string, unknown>): ExecutorEvent[] {
    switch (method) {
      case "item/started": return this.#started(record(p.item));
      case "item/completed": return this.#completed(record(p.item));
      case "warning": return this.#diagnostic("warning", str(p.message));
      case "configWarning": return this.#diagnostic("warning", str(p.summary));
      case "error": return this.#diagnostic(p.willRetry === true ? "warning" : "error", str(record(p.error).message));
      case "item/commandExecution/outputDelta": return [{ type: "activity" }];
      case "thread/tokenUsage/updated": return this.#usage(record(p.tokenUsage));
      default: return [];
    }
  }

  /** Closes open messages and unsettled tools at the end of a turn. */
  finish(): ExecutorEvent[] {
    const out: ExecutorEvent[] = this.flush();
    for (const channel of ["text", "reasoning"] as const) {
      const open = this.#open[channel];
      if (open !== null) out.push({ type: "message_completed", channel, messageId: open });
      this.#open[channel] = null;
    }
    for (const env of this.#tools.values()) out.push({ type: "tool_end", envelope: { ...env, locations: [...env.locations] }, settled: false });
    this.#tools.clear();
    return out;
  }

  #delta(channel: Channel, p: Record<string, unknown>): ExecutorEvent[] {
    const itemId = str(p.itemId);
    const text = str(p.delta) ?? "";
    if (itemId !== null) this.#streamed.add(itemId);
    const pending = this.#pending;
    if (pending !== null && pending.channel === channel && pending.messageId === itemId) {
      pending.text += text;
      return [];
    }
    const out: ExecutorEvent[] = this.flush();
    const open = this.#open[channel];
    if (open !== null && open !== itemId) out.push({ type: "message_completed", channel, messageId: open });
    this.#open[channel] = itemId;
    if (text.length > 0) this.#pending = { channel, messageId: itemId, text };
    return out;
  }

  #started(item: Item): ExecutorEvent[] {
    const id = str(item.id);
    const type = str(item.type);
    if (id === null || type === null || !TOOL_TYPES.has(type) || this.#tools.has(id)) return [];
    const env = envelopeOf(item, id, type);
    this.#tools.set(id, env);
    return [{ type: "tool_begin", envelope: { ...env, locations: [...env.locations] } }];
  }

  #completed(item: Item): ExecutorEvent[] {
    const id = str(item.id);
    const type = str(item.type);
    if (id === null || type === null) return [];
    if (type === "agentMessage" || type === "reasoning") {
      const channel: Channel = type === "agentMessage" ? "text" : "reasoning";
      if (!this.#streamed.has(id)) return this.#unstreamed(channel, item, id);
      if (this.#open[channel] !== id) return [];
      this.#open[channel] = null;
      return [{ type: "message_completed", channel, messageId: id }];
    }
    if (type === COMPACTION_ITEM_TYPE) return [{ type: "context_compacted" }];
    if (!TOOL_TYPES.has(type)) return [];
    const known = this.#tools.get(id);
    const env = envelopeOf(item, id, type);
    this.#tools.delete(id);
    const out: ExecutorEvent[] = known ? [] : [{ type: "tool_begin", envelope: { ...env, locations: [...env.locations] } }];
    out.push({ type: "tool_end", envelope: env, settled: true });
    return out;
  }

  /**
   * An item no delta streamed: an agent message's text, a reasoning item's raw
   * text (else its summary), as one block, then its completion.
   */
  #unstreamed(channel: Channel, item: Item, id: string): ExecutorEvent[] {
    const joined = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").join("") : "");
    const text = channel === "text" ? (str(item.text) ?? "") : joined(item.content) || joined(item.summary);
    if (text.length === 0) return [];
    const out: ExecutorEvent[] = [];
    const open = this.#open[channel];
    if (open !== null) out.push({ type: "message_completed", channel, messageId: open });
    this.#open[channel] = null;
    this.#streamed.add(id);
    out.push({ type: channel, messageId: id, text }, { type: "message_completed", channel, messageId: id });
    return out;
  }

  /**
   * The turn's usage so far: Codex reports the thread's running `total` and the
   * `last` model call; the turn's figures are the total minus what it was
   * before the turn's first call (robust to a repeated report).
   */
  #usage(u: Record<string, unknown>): ExecutorEvent[] {
    const total = breakdown(record(u.total));
    const last = breakdown(record(u.last));
    if (total === null) return [{ type: "activity" }];
    this.#usageBase ??= last === null ? total : minus(total, last);
    const turn = minus(total, this.#usageBase);
    return [{ type: "token_usage", ...turn }];
  }

  #diagnostic(severity: string, text: string | null): ExecutorEvent[] {
    const t = (text ?? "").trim().slice(0, MAX_DIAGNOSTIC);
    return t.length === 0 ? [] : [{ type: "diagnostic", severity, text: t }];
  }
}
