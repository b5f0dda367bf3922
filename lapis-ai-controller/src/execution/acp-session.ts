// One ACP agent process, its SDK client connection and one native session.
// Every wait has a deadline; close() leaves no process behind.
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { CONTROLLER_VERSION } from "../domain/protocol.ts";
import type { ContextBlock, NativeModeRecord, PreparedSession, SessionContinuity, TurnOutcome, TurnSink } from "../domain/executor-port.ts";
import { AcpEventTranslator, acpUsage } from "./acp-events.ts";
import type { ResolvedLaunch } from "./acp-launch.ts";
import { planMode, rejectedMode, restrictedModeId } from "./acp-modes.ts";
import { openSession, reopenCapabilities, type OpenPlan } from "./acp-open.ts";
import { toAsk, toResponse } from "./acp-permissions.ts";
import type { AcpStdioServer } from "./acp-mcp.ts";
import type { McpHttpServer } from "./tool-bridge.ts";

/** Parameters of one session start. */
export type AcpSessionStart = {
  launch: ResolvedLaunch;
  env: Record<string, string>;
  cwd: string;
  restricted: boolean;
  requestedMode: string | null;
  restrictedModes: readonly string[];
  setupTimeoutMs: number;
  killGraceMs: number;
  /** MCP servers for `session/new` (the application-tool bridge; empty when restricted). */
  mcpServers?: readonly McpHttpServer[];
  /** The application's external stdio MCP servers (acp-mcp.ts; empty when restricted). A session refused with them is `mcp_unsupported`. */
  stdioServers?: readonly AcpStdioServer[];
  /** Runs once after the agent process is gone (e.g. removing an isolated cwd). */
  onClosed?: () => void;
  /** The thread's stored native session to reopen, or the reset the executor already decided. */
  open?: OpenPlan;
};

class Deadline extends Error {}
class McpRefused extends Error {}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const t = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Deadline()), ms); });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** One application context block as plain text, which every ACP agent accepts (embedded resources are optional). */
function contextBlock(c: ContextBlock): acp.ContentBlock {
  return { type: "text", text: `<context source="${c.source}">\n${c.text}\n</context>` };
}

/** A live ACP session; created only through startAcpSession. */
export class AcpSession implements PreparedSession {
  nativeSessionId = "";
  nativeMode: NativeModeRecord = { requested: null, result: "unreported", current: null };
  /** How the session opened relative to the thread's stored one (set by setup). */
  continuity: SessionContinuity = { kind: "new" };
  readonly restricted: boolean;
  #child: ChildProcess;
  #conn: acp.ClientConnection | null = null;
  #sink: TurnSink | null = null;
  #translator: AcpEventTranslator | null = null;
  #exited: Promise<void>;
  #alive = true;
  #killGraceMs: number;
  #nextNative = 0;
  /** Set by abort(): the code a prompt in flight ends with instead of provider_exited. */
  #abortCode: string | null = null;

  constructor(child: ChildProcess, restricted: boolean, killGraceMs: number, onClosed: () => void = () => {}) {
    this.#child = child;
    this.restricted = restricted;
    this.#killGraceMs = killGraceMs;
    let done = false;
    const exit = (resolve: () => void) => () => {
      this.#alive = false;
      if (!done) { done = true; onClosed(); }
      resolve();
    };
    this.#exited = new Promise((resolve) => {
      child.once("exit", exit(resolve));
      child.once("error", exit(resolve));
    });
  }

  /** True while the agent process runs and the connection is open. */
  get alive(): boolean { return this.#alive && this.#conn !== null && !this.#conn.signal.aborted; }

  /** Opens the SDK connection with our handlers. */
  connect(): void {
    const app = acp.client({ name: "lapis-ai-controller" })
      // Parsed once, not twice: the session router `acp.client()` installs ahead of every app handler already parses
      // each session/update with the SDK's own schema (zSessionNotification) and a refused one never reaches this
      // handler (test/unit/execution/acp-update-validation.test.ts), so the handler's own copy of that parse is skipped.
      .onNotification(acp.methods.client.session.update, (params: unknown) => params as acp.SessionNotification, ({ params }) => {
        // Updates for another session (a lying agent) are dropped.
        if (params.sessionId !== this.nativeSessionId || !this.#sink || !this.#translator) return;
        for (const e of this.#translator.translate(params.update as { sessionUpdate: string })) this.#sink.event(e);
      })
      .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
        const sink = this.#sink;
        // A request outside a running prompt (late) cannot change completion (P-TRN-18).
        if (!sink || params.sessionId !== this.nativeSessionId) throw acp.RequestError.invalidRequest(undefined, "no active turn");
        this.#nextNative += 1;
        const ask = toAsk(`${this.nativeSessionId}:${this.#nextNative}`, params);
        const decision = await sink.permission(ask);
        return toResponse(ask, decision);
      })
      .onRequest("*", ({ method }) => {
        this.#sink?.event({ type: "unknown_request", method });
        throw acp.RequestError.methodNotFound(method);
      });
    const stdin = this.#child.stdin;
    const stdout = this.#child.stdout;
    if (!stdin || !stdout) throw new Error("agent pipes missing");
    this.#conn = app.connect(acp.ndJsonStream(Writable.toWeb(stdin) as WritableStream<Uint8Array>, Readable.toWeb(stdout) as ReadableStream<Uint8Array>));
    void this.#exited.then(() => this.#conn?.close());
  }

  /** initialize, session/new (or resume/load) and mode selection under one setup deadline. */
  async setup(start: AcpSessionStart): Promise<{ ok: true } | { ok: false; code: string }> {
    const conn = this.#conn;
    if (!conn) return { ok: false, code: "provider_setup_failed" };
    try {
      await withDeadline((async () => {
        const init = await conn.agent.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          // `session.notices`: agents (codex-acp) then send their warnings as notices, not as agent message text.
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, session: { notices: {} } },
          clientInfo: { name: "lapis-ai-controller", version: CONTROLLER_VERSION },
        });
        const mcpServers: acp.McpServer[] = start.restricted ? [] : [
          ...(start.mcpServers ?? []).map((m) => ({ type: "http" as const, name: m.name, url: m.url, headers: m.headers.map((h) => ({ name: h.name, value: h.value })) })),
          ...(start.stdioServers ?? []),
        ];
        let opened: Awaited<ReturnType<typeof openSession>>;
        try {
          opened = await openSession(conn, reopenCapabilities(init), start.open ?? { kind: "new" }, start.cwd, mcpServers);
        } catch (e) {
          if (e instanceof acp.RequestError && (start.stdioServers ?? []).length > 0) throw new McpRefused();
          throw e;
        }
        this.nativeSessionId = opened.sessionId;
        this.continuity = opened.continuity;
        const advertised = opened.modes;
        const wanted = start.restricted ? restrictedModeId(advertised, start.restrictedModes) ?? start.restrictedModes[0] ?? null : start.requestedMode;
        const plan = planMode(wanted, advertised);
        this.nativeMode = plan.record;
        if (plan.call && wanted !== null) {
          try { await conn.agent.request(acp.methods.agent.session.setMode, { sessionId: opened.sessionId, modeId: wanted }); }
          catch (e) { if (e instanceof acp.RequestError) this.nativeMode = rejectedMode(wanted, advertised); else throw e; }
        }
      })(), start.setupTimeoutMs);
    } catch (e) {
      return { ok: false, code: e instanceof Deadline ? "provider_setup_timeout" : e instanceof McpRefused ? "mcp_unsupported" : "provider_setup_failed" };
    }
    // A restricted session that could not enter read-only mode fails closed.
    if (start.restricted && this.nativeMode.result !== "applied") return { ok: false, code: "restricted_mode_unavailable" };
    return { ok: true };
  }

  /** Sends the context blocks and the prompt, and waits for the provider's stop reason. */
  async dispatch(prompt: string, sink: TurnSink, context: readonly ContextBlock[] = []): Promise<TurnOutcome> {
    const conn = this.#conn;
    if (!conn || !this.alive) return { kind: "failed", code: "provider_exited" };
    this.#sink = sink;
    this.#translator = new AcpEventTranslator();
    try {
      const blocks: acp.ContentBlock[] = [...context.map(contextBlock), { type: "text", text: prompt }];
      const res = await conn.agent.request(acp.methods.agent.session.prompt, { sessionId: this.nativeSessionId, prompt: blocks });
      const usage = acpUsage((res as { usage?: unknown }).usage);
      if (usage !== null) sink.event(usage);
      return { kind: "stopped", stopReason: res.stopReason };
    } catch (e) {
      return { kind: "failed", code: this.#abortCode ?? (e instanceof acp.RequestError ? "provider_error" : "provider_exited") };
    } finally {
      for (const e of this.#translator.finish()) sink.event(e);
      this.#sink = null;
      this.#translator = null;
      if (this.restricted) await this.close();
    }
  }

  /** session/cancel; the prompt response remains the only proof (P-TRN-02). */
  cancel(): void {
    if (this.#conn && this.alive) void this.#conn.agent.notify(acp.methods.agent.session.cancel, { sessionId: this.nativeSessionId }).catch(() => {});
  }

  /** Ends a prompt in flight with `code` (not provider_exited), then closes the agent. */
  async abort(code: string): Promise<void> {
    this.#abortCode = code;
    await this.close();
  }

  /** Closes stdin, then TERM, then KILL after the grace deadline. */
  async close(): Promise<void> {
    this.#conn?.close();
    this.#child.stdin?.end();
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const grace = setTimeout(() => this.#child.kill("SIGTERM"), Math.min(this.#killGraceMs, 1_000));
      const hard = setTimeout(() => this.#child.kill("SIGKILL"), this.#killGraceMs);
      await this.#exited;
      clearTimeout(grace);
      clearTimeout(hard);
    }
  }
}

/** Spawns the agent and runs setup; setup failures are values (P-TRN-03). */
export async function startAcpSession(start: AcpSessionStart): Promise<{ ok: true; session: AcpSession } | { ok: false; code: string }> {
  let child: ChildProcess;
  try {
    child = spawn(start.launch.command, start.launch.args, { cwd: start.cwd, env: start.env, stdio: ["pipe", "pipe", "pipe"] });
  } catch {
    return { ok: false, code: "provider_setup_failed" };
  }
  // Agent stderr may carry anything; it is drained, never logged.
  child.stderr?.resume();
  const spawned = await new Promise<boolean>((resolve) => {
    child.once("spawn", () => resolve(true));
    child.once("error", () => resolve(false));
  });
  const session = new AcpSession(child, start.restricted, start.killGraceMs, start.onClosed);
  if (!spawned) return { ok: false, code: "provider_setup_failed" };
  session.connect();
  const r = await session.setup(start);
  if (!r.ok) { await session.close(); return r; }
  return { ok: true, session };
}
