// Scripted ACP agent: a TEST STAND-IN, never shipped. A real ACP v1 peer on the
// SDK's agent side whose behaviour each test scripts through a JSON file named
// named by argv[2]; everything it receives is appended to the NDJSON log named
// by argv[3] so tests can count prompts across restarts.
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { connectBridge } from "./mcp-client.ts";

/** One scripted action inside a prompt turn. */
export type AgentStep =
  | { say: string; messageId?: string }
  | { think: string; messageId?: string }
  | { tool: { id: string; title: string; kind?: string; status?: string; locations?: { path: string }[]; rawInput?: unknown } }
  | { toolUpdate: { id: string; status?: string; title?: string; kind?: string; locations?: { path: string }[]; rawOutput?: unknown } }
  | { permission: PermissionAsk }
  | { permissions: PermissionAsk[] }
  | { sleep: number }
  | { stall: true }
  | { crash: number }
  | { unknownRequest: string }
  | { foreignSessionUpdate: string }
  /** Sends `update` as this session's session/update as is, valid or not (what a faulty or hostile agent may send). */
  | { rawUpdate: Record<string, unknown> }
  | { sayEnv: string[] }
  | { stderr: string }
  /** Plays an MCP client of the session's first HTTP MCP server (the controller's tool bridge): lists its tools, then makes the calls; each result is logged. */
  | { mcp: { calls: { name: string; args: Record<string, unknown> }[] } }
  | { mcpLoop: McpLoop };

/** Calls the session's MCP tools in turn, round after round, until `untilFile` exists (at most `maxRounds`). */
export type McpLoop = { calls: { tool: string; args: Record<string, unknown> }[]; untilFile: string; maxRounds: number };

/** A permission request the agent sends to the client. */
export type PermissionAsk = { toolCallId: string; title?: string; kind?: string; options: { optionId: string; name?: string; kind: string }[] };

/** The whole script of one agent process. */
export type AgentScript = {
  /** "advertise" sends availableModes; "absent" sends none. */
  modes?: "advertise" | "absent";
  modeIds?: string[];
  /** How session/set_mode answers. */
  setMode?: "accept" | "reject";
  /** Steps for a prompt whose text contains the key; first match wins. */
  byPrompt?: Record<string, AgentStep[]>;
  steps?: AgentStep[];
  /** How the agent treats session/cancel of a stalled turn. */
  cancel?: "confirm" | "never" | "lie";
  cancelDelayMs?: number;
  stopReason?: string;
  /** The ACP `usage` of every completed prompt response (absent: the agent reports none). */
  usage?: Record<string, number>;
  /** A permission request sent after the prompt response (a late request). */
  lateRequest?: PermissionAsk;
  /** Exit right at spawn (a crashing agent). */
  crashAtStart?: number;
  /** Advertises `loadSession` (answers session/load, replaying one history chunk first). */
  loadSession?: boolean;
  /** Advertises `sessionCapabilities.resume` (answers session/resume). */
  resume?: boolean;
  /** How session/resume and session/load answer a stored id: accept (default) or refuse. */
  reopen?: "accept" | "reject";
  /** How session/new treats stdio MCP servers: accept (default, logged with env names and value lengths) or refuse (invalid params). */
  stdioMcp?: "accept" | "refuse";
};

const scriptPath = process.argv[2];
const script: AgentScript = scriptPath ? (JSON.parse(readFileSync(scriptPath, "utf8")) as AgentScript) : {};
const logPath = process.argv[3];

/** The MCP servers each session was given (session/new, resume, load). */
const sessionServers = new Map<string, acp.McpServer[]>();

async function mcpLoop(sessionId: string, loop: McpLoop, cancelled: AbortSignal): Promise<void> {
  const server = (sessionServers.get(sessionId) ?? []).find((s) => "type" in s && s.type === "http") as { url: string; headers: { name: string; value: string }[] } | undefined;
  if (server === undefined) { log({ event: "mcp_error", code: "no_server" }); return; }
  const bridge = await connectBridge(server.url, server.headers);
  try {
    for (let round = 0; round < loop.maxRounds && !cancelled.aborted && !existsSync(loop.untilFile); round++) {
      for (const call of loop.calls) {
        const r = await bridge.callTool(call.tool, call.args);
        log({ event: "mcp_result", tool: call.tool, isError: r.isError, text: r.text.slice(0, 200) });
      }
    }
  } finally {
    await bridge.close();
  }
}

async function playMcp(sessionId: string, calls: { name: string; args: Record<string, unknown> }[]): Promise<void> {
  const server = (sessionServers.get(sessionId) ?? []).find((s) => "type" in s && s.type === "http") as { url: string; headers: { name: string; value: string }[] } | undefined;
  if (server === undefined) { log({ event: "mcp_none" }); return; }
  const bridge = await connectBridge(server.url, server.headers);
  try {
    log({ event: "mcp_list", tools: await bridge.listTools() });
    for (const c of calls) log({ event: "mcp_call", name: c.name, ...(await bridge.callTool(c.name, c.args)) });
  } finally {
    await bridge.close();
  }
}

function log(entry: Record<string, unknown>): void {
  if (logPath) appendFileSync(logPath, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
}

const gitEnv: Record<string, string> = {};
for (const [k, v] of Object.entries(process.env)) if (k.startsWith("GIT_") && v !== undefined) gitEnv[k] = v;
log({ event: "spawn", envKeys: Object.keys(process.env).sort(), git: gitEnv, cwd: process.cwd() });
if (script.crashAtStart !== undefined) process.exit(script.crashAtStart);

const modeIds = script.modeIds ?? ["read-only", "agent", "workspace-write"];
let sessionCounter = 0;
const cancels = new Map<string, () => void>();

function reopenedModes(): acp.SessionModeState | null {
  return script.modes === "absent" ? null : { currentModeId: modeIds[0] ?? "default", availableModes: modeIds.map((id) => ({ id, name: id })) };
}

function stepsFor(text: string): AgentStep[] {
  for (const [key, steps] of Object.entries(script.byPrompt ?? {})) if (text.includes(key)) return steps;
  return script.steps ?? [{ say: "ok", messageId: "m1" }];
}

function promptText(blocks: acp.ContentBlock[]): string {
  return blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

async function ask(client: acp.AgentContext, sessionId: string, p: PermissionAsk): Promise<void> {
  try {
    const res: acp.RequestPermissionResponse = await client.request(acp.methods.client.session.requestPermission, {
      sessionId,
      toolCall: { toolCallId: p.toolCallId, title: p.title ?? "permission", kind: (p.kind ?? "execute") as acp.ToolKind },
      options: p.options.map((o) => ({ optionId: o.optionId, name: o.name ?? o.optionId, kind: o.kind as acp.PermissionOptionKind })),
    });
    log({ event: "permission_response", toolCallId: p.toolCallId, outcome: res.outcome });
  } catch (e) {
    log({ event: "permission_error", toolCallId: p.toolCallId, code: (e as { code?: number }).code ?? null });
  }
}

async function runTurn(client: acp.AgentContext, sessionId: string, steps: AgentStep[], cancelled: AbortSignal): Promise<boolean> {
  const update = (u: acp.SessionUpdate) => client.notify(acp.methods.client.session.update, { sessionId, update: u });
  for (const step of steps) {
    if (cancelled.aborted) return true;
    if ("say" in step) await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: step.say }, messageId: step.messageId ?? null });
    else if ("think" in step) await update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: step.think }, messageId: step.messageId ?? null });
    else if ("tool" in step) await update({ sessionUpdate: "tool_call", toolCallId: step.tool.id, title: step.tool.title, kind: step.tool.kind as acp.ToolKind, status: (step.tool.status ?? "pending") as acp.ToolCallStatus, locations: step.tool.locations, rawInput: step.tool.rawInput });
    else if ("toolUpdate" in step) await update({ sessionUpdate: "tool_call_update", toolCallId: step.toolUpdate.id, status: (step.toolUpdate.status ?? null) as acp.ToolCallStatus | null, title: step.toolUpdate.title ?? null, kind: (step.toolUpdate.kind ?? null) as acp.ToolKind | null, locations: step.toolUpdate.locations ?? null, rawOutput: step.toolUpdate.rawOutput });
    else if ("permission" in step) await ask(client, sessionId, step.permission);
    else if ("permissions" in step) await Promise.all(step.permissions.map((p) => ask(client, sessionId, p)));
    else if ("sleep" in step) await sleep(step.sleep, cancelled);
    else if ("stall" in step) await new Promise<void>((resolve) => cancelled.addEventListener("abort", () => resolve(), { once: true }));
    else if ("crash" in step) { log({ event: "crash" }); process.exit(step.crash); }
    else if ("unknownRequest" in step) {
      try { await client.request(step.unknownRequest, {}); log({ event: "unknown_ok" }); }
      catch (e) { log({ event: "unknown_error", code: (e as { code?: number }).code ?? null }); }
    } else if ("foreignSessionUpdate" in step) {
      await client.notify(acp.methods.client.session.update, { sessionId: "foreign-session", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: step.foreignSessionUpdate } } });
    } else if ("rawUpdate" in step) {
      await client.notify(acp.methods.client.session.update, { sessionId, update: step.rawUpdate as unknown as acp.SessionUpdate });
    } else if ("stderr" in step) {
      process.stderr.write(`${step.stderr}\n`);
    } else if ("mcp" in step) {
      await playMcp(sessionId, step.mcp.calls);
    } else if ("mcpLoop" in step) {
      await mcpLoop(sessionId, step.mcpLoop, cancelled);
    } else if ("sayEnv" in step) {
      await update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: step.sayEnv.map((k) => `${k}=${process.env[k] ?? ""}`).join(";") } });
    }
  }
  return cancelled.aborted;
}

const app = acp.agent({ name: "scripted-acp-agent" })
  .onRequest(acp.methods.agent.initialize, () => {
    log({ event: "initialize" });
    const sessionCapabilities = script.resume === true ? { resume: {} } : {};
    return { protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { loadSession: script.loadSession ?? false, sessionCapabilities }, agentInfo: { name: "scripted-acp-agent", version: "0.0.0-test" } };
  })
  .onRequest(acp.methods.agent.session.resume, ({ params }) => {
    log({ event: "session_resume", sessionId: params.sessionId, cwd: params.cwd });
    sessionServers.set(params.sessionId, params.mcpServers ?? []);
    if (script.reopen === "reject") throw acp.RequestError.resourceNotFound(params.sessionId);
    return { modes: reopenedModes() };
  })
  .onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
    log({ event: "session_load", sessionId: params.sessionId, cwd: params.cwd });
    sessionServers.set(params.sessionId, params.mcpServers ?? []);
    if (script.reopen === "reject") throw acp.RequestError.resourceNotFound(params.sessionId);
    // A loading agent replays the conversation before it answers.
    await client.notify(acp.methods.client.session.update, { sessionId: params.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "REPLAYED-HISTORY" } } });
    return { modes: reopenedModes() };
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    sessionCounter += 1;
    const sessionId = `scripted-${process.pid}-${sessionCounter}`;
    log({ event: "session_new", sessionId, cwd: params.cwd, mcpServers: params.mcpServers.length });
    const stdio = params.mcpServers.filter((m): m is acp.McpServerStdio => !("type" in m));
    if (stdio.length > 0) {
      // Names and value lengths only: the log is not a place for values.
      log({ event: "mcp_stdio", servers: stdio.map((m) => ({ name: m.name, command: m.command, args: m.args, env: m.env.map((e) => `${e.name}:${e.value.length}`) })) });
      if (script.stdioMcp === "refuse") throw acp.RequestError.invalidParams(undefined, "stdio MCP servers are not supported");
    }
    sessionServers.set(sessionId, params.mcpServers);
    const modes = script.modes === "absent" ? null : { currentModeId: modeIds[0] ?? "default", availableModes: modeIds.map((id) => ({ id, name: id })) };
    return { sessionId, modes };
  })
  .onRequest(acp.methods.agent.session.setMode, ({ params }) => {
    log({ event: "set_mode", modeId: params.modeId });
    if (script.setMode === "reject" || !modeIds.includes(params.modeId)) throw acp.RequestError.invalidParams(undefined, "mode");
    return {};
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const text = promptText(params.prompt);
    log({ event: "prompt", sessionId: params.sessionId, text });
    const abort = new AbortController();
    cancels.set(params.sessionId, () => abort.abort());
    const wasCancelled = await runTurn(client, params.sessionId, stepsFor(text), abort.signal);
    cancels.delete(params.sessionId);
    if (wasCancelled) {
      if (script.cancel === "never") await new Promise(() => {});
      if (script.cancelDelayMs) await new Promise((r) => setTimeout(r, script.cancelDelayMs));
      const stopReason = script.cancel === "lie" ? "end_turn" : "cancelled";
      log({ event: "prompt_done", stopReason });
      return { stopReason };
    }
    if (script.lateRequest) {
      const late = script.lateRequest;
      setTimeout(() => void ask(client, params.sessionId, late), 50);
    }
    const stopReason = (script.stopReason ?? "end_turn") as acp.StopReason;
    log({ event: "prompt_done", stopReason });
    return script.usage === undefined ? { stopReason } : { stopReason, usage: script.usage } as acp.PromptResponse;
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log({ event: "cancel", sessionId: params.sessionId });
    cancels.get(params.sessionId)?.();
  });

const connection = app.connect(acp.ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
));
// The controller closing our stdin ends us: no agent outlives its client.
void connection.closed.finally(() => { log({ event: "exit" }); process.exit(0); });
process.stdin.on("end", () => { log({ event: "exit" }); process.exit(0); });
