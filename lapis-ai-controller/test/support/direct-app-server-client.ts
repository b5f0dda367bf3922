// BENCH BASELINE, not controller code. The baseline of the native rows: a
// minimal application that drives `codex app-server` itself over its
// newline-delimited JSON-RPC, as Codex's own rich clients do. Same launch (the
// installed @openai/codex), same environment, same model as the controller's
// native provider. No controller code runs on this path except the launch lookup.
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { currentLaunchHost } from "../../src/execution/acp-launch.ts";
import { resolveCodexLaunch } from "../../src/execution/codex-launch.ts";

const now = (): number => performance.now();

/** What one direct turn observed, in ms since turn/start was sent. */
export type DirectAppServerTiming = { firstTextMs: number; doneMs: number; status: string };

/** A live app-server with one thread. */
export type DirectAppServer = {
  turn(text: string): Promise<DirectAppServerTiming>;
  close(): Promise<void>;
};

type Message = { id?: number | string; method?: string; params?: Record<string, unknown>; result?: Record<string, unknown>; error?: unknown };

/**
 * Launches the app-server, initializes and starts one thread in `cwd`.
 * `onNotification` (optional) sees every notification as it arrives (the
 * bench's relay floor journals and forwards them).
 */
export async function startDirectAppServer(options: { env: Record<string, string>; cwd: string; timeoutMs?: number; onNotification?: (method: string, params: unknown) => void }): Promise<DirectAppServer> {
  const resolved = resolveCodexLaunch({}, currentLaunchHost());
  if (!resolved.ok) throw new Error(`codex launch: ${resolved.code}`);
  const child: ChildProcess = spawn(resolved.launch.command, resolved.launch.args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  child.stderr?.resume();
  const exited = new Promise<void>((resolve) => { child.once("exit", () => resolve()); child.once("error", () => resolve()); });
  if (!child.stdin || !child.stdout) throw new Error("app-server pipes missing");
  const stdin = child.stdin;
  const limit = options.timeoutMs ?? 120_000;
  let nextId = 0;
  const replies = new Map<number, (m: Message) => void>();
  let onNote: (m: Message) => void = () => {};
  createInterface({ input: child.stdout }).on("line", (line) => {
    const m = JSON.parse(line) as Message;
    if (m.method === undefined && typeof m.id === "number") replies.get(m.id)?.(m);
    else if (m.method !== undefined && m.id !== undefined) stdin.write(`${JSON.stringify({ id: m.id, error: { code: -32601, message: "not handled" } })}\n`);
    else {
      if (m.method !== undefined) options.onNotification?.(m.method, m.params);
      onNote(m);
    }
  });
  const request = (method: string, params: unknown): Promise<Message> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer`)), limit);
      replies.set(id, (m) => { clearTimeout(timer); replies.delete(id); resolve(m); });
      stdin.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  };
  await request("initialize", { clientInfo: { name: "bench-direct", title: null, version: "1" }, capabilities: null });
  stdin.write(`${JSON.stringify({ method: "initialized" })}\n`);
  const started = await request("thread/start", { cwd: options.cwd, approvalPolicy: "on-request", sandbox: "workspace-write" });
  const threadId = String((started.result?.thread as { id?: unknown } | undefined)?.id ?? "");
  if (threadId === "") throw new Error("thread/start failed");
  return {
    turn: async (text) => {
      let firstText: number | null = null;
      const t0 = now();
      const done = new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("turn: no turn/completed")), limit);
        onNote = (m) => {
          if (m.method === "item/agentMessage/delta" && firstText === null) firstText = now();
          if (m.method === "turn/completed") { clearTimeout(timer); resolve(String((m.params?.turn as { status?: unknown } | undefined)?.status ?? "")); }
        };
      });
      await request("turn/start", { threadId, input: [{ type: "text", text, text_elements: [] }] });
      const status = await done;
      const end = now();
      return { firstTextMs: (firstText ?? end) - t0, doneMs: end - t0, status };
    },
    close: async () => {
      stdin.end();
      const hard = setTimeout(() => child.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(hard);
    },
  };
}
