// BENCH BASELINE, not controller code. The baseline every agent row is measured against: a minimal application
// that drives codex-acp itself with @agentclientprotocol/sdk, as an editor or
// acpx does. Same launch (the acpx registry), same environment, same mode and
// same model as the controller's provider; it answers permission requests
// itself. No controller code runs on this path except the launch lookup.
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { currentLaunchHost, resolveLaunch } from "../../src/execution/acp-launch.ts";
const now = (): number => performance.now();

/** What one direct prompt observed, in ms since the prompt was sent. */
export type DirectTiming = { firstTextMs: number; doneMs: number; stopReason: string };

/** A live codex-acp process with one native session. */
export type DirectAgent = {
  /** Sends `text`; resolves when the agent's prompt response arrives. */
  prompt(text: string): Promise<DirectTiming>;
  /** Called for each permission request; resolves with the moment the answer left. */
  onPermission: ((options: { optionId: string; kind: string }[]) => string) | null;
  /** Times (now()) at which permission answers were sent, in order. */
  readonly answeredAt: number[];
  close(): Promise<void>;
};

/**
 * Launches codex-acp, initializes, opens a session in `cwd` and selects `modeId`.
 * `onUpdate` (optional) sees every `session/update` notification's params as
 * it arrives (the bench's relay floor journals and forwards them).
 * `parseOnce` (the relay floor): the handler takes the verdict of the session
 * router `acp.client()` installs, which already parses every update with the
 * SDK's schema, instead of parsing it a second time (as serve does, P-PRF-06);
 * the baseline keeps the SDK's default (two parses).
 */
export async function startDirectAgent(options: { env: Record<string, string>; cwd: string; modeId: string; onUpdate?: (params: unknown) => void; parseOnce?: boolean }): Promise<DirectAgent> {
  const resolved = resolveLaunch({ agent: "codex" }, currentLaunchHost());
  if (!resolved.ok) throw new Error(`codex launch: ${resolved.code}`);
  const child: ChildProcess = spawn(resolved.launch.command, resolved.launch.args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  child.stderr?.resume();
  const exited = new Promise<void>((resolve) => { child.once("exit", () => resolve()); child.once("error", () => resolve()); });
  let sessionId = "";
  let firstText: number | null = null;
  const answeredAt: number[] = [];
  const agent: DirectAgent = {
    onPermission: null,
    answeredAt,
    prompt: async (text) => {
      firstText = null;
      const t0 = now();
      const res = await conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
      const done = now();
      return { firstTextMs: (firstText ?? done) - t0, doneMs: done - t0, stopReason: res.stopReason };
    },
    close: async () => {
      conn.close();
      child.stdin?.end();
      const hard = setTimeout(() => child.kill("SIGKILL"), 3_000);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      clearTimeout(hard);
    },
  };
  const onUpdate = ({ params }: { params: acp.SessionNotification }): void => {
    const update = params.update as { sessionUpdate: string };
    if (update.sessionUpdate === "agent_message_chunk" && firstText === null) firstText = now();
    options.onUpdate?.(params);
  };
  const app = (options.parseOnce === true
    ? acp.client({ name: "bench-direct" }).onNotification(acp.methods.client.session.update, (params: unknown) => params as acp.SessionNotification, onUpdate)
    : acp.client({ name: "bench-direct" }).onNotification(acp.methods.client.session.update, onUpdate))
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      const choose = agent.onPermission;
      const optionId = choose === null ? null : choose(params.options.map((o) => ({ optionId: o.optionId, kind: o.kind })));
      answeredAt.push(now());
      return optionId === null ? { outcome: { outcome: "cancelled" as const } } : { outcome: { outcome: "selected" as const, optionId } };
    });
  if (!child.stdin || !child.stdout) throw new Error("agent pipes missing");
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    // The same capabilities as the controller, so Codex sends its notices (e.g. "Model metadata … not found") as notices, not as reply text.
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, session: { notices: {} } },
    clientInfo: { name: "bench-direct", version: "1" },
  });
  const created = await conn.agent.request(acp.methods.agent.session.new, { cwd: options.cwd, mcpServers: [] });
  sessionId = created.sessionId;
  await conn.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: options.modeId });
  return agent;
}
