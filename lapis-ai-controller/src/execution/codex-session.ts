// One `codex app-server` process, its JSON-RPC connection and one native
// thread. Setup (initialize, thread/start or thread/resume with the per-thread
// config sent again) runs under one deadline; a turn ends only on the
// server's `turn/completed` (or the process ending), so a cancel keeps the
// turn, and with it the workspace lease, until Codex confirms. close() leaves
// no process behind: stdin closes, then TERM, then KILL of the process group.
import { spawn, type ChildProcess } from "node:child_process";
import { CONTROLLER_VERSION } from "../domain/protocol.ts";
import type { ContextBlock, NativeModeRecord, PreparedSession, SessionContinuity, TurnOutcome, TurnSink } from "../domain/executor-port.ts";
import type { ResolvedLaunch } from "./acp-launch.ts";
import { planServerRequest } from "./codex-approvals.ts";
import { CodexEventTranslator } from "./codex-events.ts";
import { CodexRpc, RPC_CODES, type RpcReply, type ServerAnswer } from "./codex-rpc.ts";
import type { SandboxMode } from "./codex-wire.ts";

/** What to open: a new thread, a stored one to resume, or a reset the executor already decided. */
export type ThreadPlan =
  | { kind: "new" } | { kind: "resume"; threadId: string } | { kind: "reset"; reason: "session_binding_changed" }
  /** A fork of a stored native thread through one of its turns (threads.fork). */
  | { kind: "fork"; threadId: string; lastTurnId: string };

/** Parameters of one session start. */
export type CodexSessionStart = {
  launch: ResolvedLaunch;
  env: Record<string, string>;
  cwd: string;
  restricted: boolean;
  sandbox: SandboxMode;
  nativeMode: NativeModeRecord;
  /** Per-thread config overrides (MCP servers included); Codex does not persist them, so resume sends them again. */
  config: Record<string, unknown>;
  /** Some external MCP server is `required`: a refused thread/start is then reported as `mcp_required_failed`. */
  requiredMcp?: boolean;
  plan: ThreadPlan;
  setupTimeoutMs: number;
  /** Deadline of one client request during a turn (turn/start, turn/interrupt). */
  requestTimeoutMs: number;
  killGraceMs: number;
  onClosed?: () => void;
};

type Running = { sink: TurnSink; translator: CodexEventTranslator; turnId: string | null; interrupt: boolean; compaction: boolean; done(o: TurnOutcome): void };

function threadIdOf(reply: RpcReply): string | null {
  if (!reply.ok) return null;
  const thread = (reply.result as { thread?: { id?: unknown } } | null)?.thread;
  return typeof thread?.id === "string" ? thread.id : null;
}

function contextText(c: ContextBlock): string {
  return `<context source="${c.source}">\n${c.text}\n</context>`;
}

/** Codex refuses thread/start (or resume) naming the MCP server that did not start; only the fact crosses, never the text. */
function setupFailure(reply: RpcReply, requiredMcp: boolean): string {
  if (reply.ok) return "provider_setup_failed";
  if (reply.error === "timeout") return "provider_setup_timeout";
  const message = typeof reply.error === "object" ? String((reply.error as { message?: unknown }).message ?? "") : "";
  return requiredMcp && /\bmcp\b/i.test(message) ? "mcp_required_failed" : "provider_setup_failed";
}

/** A live native session; created only through startCodexSession. */
export class CodexSession implements PreparedSession {
  nativeSessionId = "";
  nativeMode: NativeModeRecord;
  continuity: SessionContinuity = { kind: "new" };
  readonly restricted: boolean;
  #child: ChildProcess;
  #rpc: CodexRpc;
  #start: CodexSessionStart;
  #turn: Running | null = null;
  #exited: Promise<void>;
  #alive = true;
  #nextAsk = 0;
  /** threads.compact: the next dispatch compacts the thread (thread/compact/start) before its turn. */
  compactFirst = false;

  constructor(child: ChildProcess, start: CodexSessionStart) {
    this.#child = child;
    this.#start = start;
    this.restricted = start.restricted;
    this.nativeMode = start.nativeMode;
    let done = false;
    this.#exited = new Promise((resolve) => {
      const exit = () => { this.#alive = false; if (!done) { done = true; start.onClosed?.(); } resolve(); };
      child.once("exit", exit);
      child.once("error", exit);
    });
    if (!child.stdout || !child.stdin) throw new Error("app-server pipes missing");
    this.#rpc = new CodexRpc(child.stdout, child.stdin, {
      notification: (m, p) => this.#notification(m, p),
      request: (m, p) => this.#request(m, p),
      readDone: () => { const t = this.#turn; if (t !== null) for (const e of t.translator.flush()) t.sink.event(e); },
    });
    // The process or its pipes ending ends a running turn as provider_exited.
    this.#rpc.onClose(() => this.#end({ kind: "failed", code: "provider_exited" }));
    void this.#exited.then(() => this.#rpc.close());
  }

  /** True while the process runs and the connection is open. */
  get alive(): boolean { return this.#alive && this.#rpc.open; }

  /** initialize, then the thread per plan; failures are payload-free codes. */
  async setup(): Promise<{ ok: true } | { ok: false; code: string }> {
    const s = this.#start;
    const end = Date.now() + s.setupTimeoutMs;
    const left = () => Math.max(1, end - Date.now());
    const init = await this.#rpc.request("initialize", { clientInfo: { name: "lapis-ai-controller", title: null, version: CONTROLLER_VERSION }, capabilities: null }, left());
    if (!init.ok) return { ok: false, code: init.error === "timeout" ? "provider_setup_timeout" : "provider_setup_failed" };
    this.#rpc.notify("initialized");
    const base = { cwd: s.cwd, approvalPolicy: "on-request", sandbox: s.sandbox, config: s.config };
    const fresh = async (continuity: SessionContinuity): Promise<RpcReply> => {
      this.continuity = continuity;
      return this.#rpc.request("thread/start", base, left());
    };
    let reply: RpcReply;
    if (s.plan.kind === "resume") {
      reply = await this.#rpc.request("thread/resume", { threadId: s.plan.threadId, ...base, excludeTurns: true }, left());
      this.continuity = { kind: "resumed", method: "thread/resume" };
      // A refused resume (rollout gone, unknown id) opens a new thread, recorded as a reset.
      if (!reply.ok && typeof reply.error === "object") reply = await fresh({ kind: "reset", reason: "resume_failed" });
    } else if (s.plan.kind === "fork") {
      // The fork's own native thread: the source's history through lastTurnId, the source untouched.
      reply = await this.#rpc.request("thread/fork", { threadId: s.plan.threadId, lastTurnId: s.plan.lastTurnId, ...base, excludeTurns: true }, left());
      this.continuity = { kind: "cut", method: "thread/fork" };
      // A refused fork (the source's rollout gone): a new thread the engine seeds from the journal.
      if (!reply.ok && typeof reply.error === "object") reply = await fresh({ kind: "cut", method: "seeded" });
    } else {
      reply = await fresh(s.plan.kind === "new" ? { kind: "new" } : s.plan);
    }
    const id = threadIdOf(reply);
    if (id === null) return { ok: false, code: setupFailure(reply, s.requiredMcp === true) };
    this.nativeSessionId = id;
    return { ok: true };
  }

  /** A new native thread in this process (a refused revert): the engine seeds it from the journal. */
  async startSeeded(): Promise<boolean> {
    const s = this.#start;
    const reply = await this.#rpc.request("thread/start", { cwd: s.cwd, approvalPolicy: "on-request", sandbox: s.sandbox, config: s.config }, s.requestTimeoutMs);
    const id = threadIdOf(reply);
    if (id === null) return false;
    this.nativeSessionId = id;
    this.continuity = { kind: "cut", method: "seeded" };
    return true;
  }

  /** threads.rollback: the native thread's history from `beforeTurnId` on is dropped (files stay as they are). */
  async revert(beforeTurnId: string): Promise<boolean> {
    const reply = await this.#rpc.request("thread/revert", { threadId: this.nativeSessionId, beforeTurnId }, this.#start.requestTimeoutMs);
    if (reply.ok) this.continuity = { kind: "cut", method: "thread/revert" };
    return reply.ok;
  }

  /** Starts a turn with the context blocks and the prompt (after a requested compaction); resolves on `turn/completed`. */
  async dispatch(prompt: string, sink: TurnSink, context: readonly ContextBlock[] = []): Promise<TurnOutcome> {
    if (this.compactFirst) {
      this.compactFirst = false;
      const compacted = await this.#run(sink, true, "thread/compact/start", { threadId: this.nativeSessionId });
      if (compacted.kind === "failed" || compacted.stopReason !== "end_turn") return compacted;
    }
    const input = [...context.map(contextText), prompt].map((text) => ({ type: "text", text, text_elements: [] }));
    const result = await this.#run(sink, false, "turn/start", { threadId: this.nativeSessionId, input });
    if (this.restricted) await this.close();
    return result;
  }

  /** One native turn (a prompt, or a compaction): the request, then the wait for its `turn/completed`. */
  async #run(sink: TurnSink, compaction: boolean, method: string, params: Record<string, unknown>): Promise<TurnOutcome> {
    if (!this.alive) return { kind: "failed", code: "provider_exited" };
    if (this.#turn !== null) return { kind: "failed", code: "provider_busy" };
    const translator = new CodexEventTranslator();
    const outcome = new Promise<TurnOutcome>((resolve) => {
      this.#turn = { sink, translator, turnId: null, interrupt: false, compaction, done: resolve };
    });
    const started = await this.#rpc.request(method, params, this.#start.requestTimeoutMs);
    const turn = this.#turn as Running | null;
    if (turn !== null && started.ok) {
      const id = (started.result as { turn?: { id?: unknown } } | null)?.turn?.id;
      if (typeof id === "string" && turn.turnId === null) this.#turnStarted(turn, id);
      if (turn.interrupt) this.#interrupt(turn);
    } else if (!started.ok) {
      this.#end(started.error === "closed" ? { kind: "failed", code: "provider_exited" } : { kind: "failed", code: "provider_error" });
    }
    return outcome;
  }

  /** The turn's native id is known: the engine journals it so a later fork or rollback can name the turn. */
  #turnStarted(turn: Running, id: string): void {
    turn.turnId = id;
    if (!turn.compaction) turn.sink.event({ type: "native_turn", nativeTurnId: id, nativeThreadId: this.nativeSessionId });
  }

  /** turns.steer: adds input to the running turn (`turn/steer` with the turn's id as precondition). */
  async steer(text: string): Promise<{ ok: true } | { ok: false; code: string }> {
    const turn = this.#turn;
    if (turn === null || turn.compaction || turn.turnId === null || !this.alive) return { ok: false, code: "turn_not_running" };
    const input = [{ type: "text", text, text_elements: [] }];
    const reply = await this.#rpc.request("turn/steer", { threadId: this.nativeSessionId, expectedTurnId: turn.turnId, input }, this.#start.requestTimeoutMs);
    return reply.ok ? { ok: true } : { ok: false, code: reply.error === "timeout" ? "provider_error" : "turn_not_running" };
  }

  /** turn/interrupt; only `turn/completed` proves the end (P-TRN-02). */
  cancel(): void {
    const turn = this.#turn;
    if (turn === null || !this.alive) return;
    turn.interrupt = true;
    if (turn.turnId !== null) this.#interrupt(turn);
  }

  #interrupt(turn: Running): void {
    if (turn.turnId === null) return;
    void this.#rpc.request("turn/interrupt", { threadId: this.nativeSessionId, turnId: turn.turnId }, this.#start.requestTimeoutMs);
  }

  #end(outcome: TurnOutcome): void {
    const turn = this.#turn;
    if (turn === null) return;
    this.#turn = null;
    for (const e of turn.translator.finish()) turn.sink.event(e);
    turn.done(outcome);
  }

  #notification(method: string, params: unknown): void {
    const p = (params ?? {}) as { threadId?: unknown; turnId?: unknown; turn?: { id?: unknown; status?: unknown } };
    const turn = this.#turn;
    if (turn === null) return;
    // Notifications of another thread (or turn) are dropped; thread-less warnings belong to this process.
    if (typeof p.threadId === "string" && p.threadId !== this.nativeSessionId) return;
    if (method === "turn/started" && turn.turnId === null && typeof p.turn?.id === "string") {
      this.#turnStarted(turn, p.turn.id);
      if (turn.interrupt) this.#interrupt(turn);
      return;
    }
    const turnId = typeof p.turnId === "string" ? p.turnId : typeof p.turn?.id === "string" ? p.turn.id : null;
    if (turnId !== null && turn.turnId !== null && turnId !== turn.turnId) return;
    if (method === "turn/completed") {
      const status = p.turn?.status;
      if (status === "completed") this.#end({ kind: "stopped", stopReason: "end_turn" });
      else if (status === "interrupted") this.#end({ kind: "stopped", stopReason: "cancelled" });
      else this.#end({ kind: "failed", code: "provider_error" });
      return;
    }
    for (const e of turn.translator.translate(method, params)) turn.sink.event(e);
  }

  async #request(method: string, params: unknown): Promise<ServerAnswer> {
    const turn = this.#turn;
    this.#nextAsk += 1;
    const plan = planServerRequest(`${this.nativeSessionId}:${this.#nextAsk}`, method, params);
    if (plan.kind === "answer") {
      if (plan.unknown) turn?.sink.event({ type: "unknown_request", method: method.slice(0, 128) });
      return plan.answer;
    }
    // A request outside a running turn cannot be asked (P-TRN-18).
    if (turn === null) return { error: { code: RPC_CODES.invalidRequest, message: "no active turn" } };
    // Text that arrived before the ask is delivered before it.
    for (const e of turn.translator.flush()) turn.sink.event(e);
    const decision = await turn.sink.permission(plan.ask);
    return plan.answer(decision);
  }

  /** Ends a turn in flight with `code`, then closes (the process group with the MCP servers Codex launched). */
  async abort(code: string): Promise<void> {
    this.#end({ kind: "failed", code });
    await this.close();
  }

  /** Closes stdin, then TERM, then KILL (of the whole process group) after the grace deadline. */
  async close(): Promise<void> {
    this.#rpc.close();
    this.#child.stdin?.end();
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const kill = (signal: NodeJS.Signals) => {
        try { if (this.#child.pid !== undefined) process.kill(-this.#child.pid, signal); } catch { this.#child.kill(signal); }
      };
      const grace = setTimeout(() => kill("SIGTERM"), Math.min(this.#start.killGraceMs, 1_000));
      const hard = setTimeout(() => kill("SIGKILL"), this.#start.killGraceMs);
      await this.#exited;
      clearTimeout(grace);
      clearTimeout(hard);
    }
  }
}

/** Spawns `codex app-server` in its own process group and runs setup; failures are values. */
export async function startCodexSession(start: CodexSessionStart): Promise<{ ok: true; session: CodexSession } | { ok: false; code: string }> {
  let child: ChildProcess;
  try {
    child = spawn(start.launch.command, start.launch.args, { cwd: start.cwd, env: start.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  } catch {
    return { ok: false, code: "provider_setup_failed" };
  }
  // stderr may carry anything; it is drained, never logged.
  child.stderr?.resume();
  const spawned = await new Promise<boolean>((resolve) => {
    child.once("spawn", () => resolve(true));
    child.once("error", () => resolve(false));
  });
  if (!spawned) { start.onClosed?.(); return { ok: false, code: "provider_setup_failed" }; }
  const session = new CodexSession(child, start);
  const r = await session.setup();
  if (!r.ok) { await session.close(); return r; }
  return { ok: true, session };
}
