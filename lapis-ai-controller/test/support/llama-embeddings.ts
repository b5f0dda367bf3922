// The real llama-server (the repository's shared install) started as an
// embeddings server (`--embeddings --pooling mean`) on the SmolLM2 GGUF, on a
// free 127.0.0.1 port, with its API key passed through its environment. Every
// wait has a deadline; the server is stopped when the test ends.
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import type { TestContext } from "node:test";
import { PACKAGE_ROOT } from "./processes.ts";

const INSTALL = resolve(PACKAGE_ROOT, "..", "scripts", "llama", "install.sh");
const INSTALL_DEADLINE_MS = 45 * 60_000;
const READY_DEADLINE_MS = 120_000;
const STOP_DEADLINE_MS = 5_000;

function installed(what: "server" | "model"): string {
  const out = spawnSync("bash", [INSTALL, "--print", what], { encoding: "utf8", timeout: INSTALL_DEADLINE_MS, stdio: ["ignore", "pipe", "ignore"] });
  if (out.status !== 0) throw new Error(`${INSTALL} --print ${what} failed`);
  return out.stdout.trim();
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as { port: number }).port;
      probe.close(() => done(port));
    });
  });
}

/** Starts llama-server for embeddings; its `/v1` base URL. `apiKey` reaches the server through LLAMA_API_KEY. */
export async function startLlamaEmbeddings(t: TestContext, apiKey: string): Promise<{ baseUrl: string }> {
  const server = installed("server");
  const model = installed("model");
  const port = await freePort();
  const args = ["-m", model, "--host", "127.0.0.1", "--port", String(port), "--embeddings", "--pooling", "mean", "-np", "1", "-t", "1", "-c", "512", "-b", "512", "-ub", "512", "--no-webui"];
  const child = spawn(server, args, { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LLAMA_API_KEY: apiKey }, stdio: ["ignore", "ignore", "ignore"] });
  let exited = false;
  child.once("exit", () => (exited = true));
  t.after(async () => {
    if (exited) return;
    child.kill("SIGTERM");
    const gone = await Promise.race([new Promise<boolean>((r) => child.once("exit", () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), STOP_DEADLINE_MS))]);
    if (!gone) child.kill("SIGKILL");
  });
  const origin = `http://127.0.0.1:${port}`;
  const end = Date.now() + READY_DEADLINE_MS;
  while (Date.now() < end) {
    if (exited) throw new Error("llama-server exited during startup");
    try {
      const health = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
      await health.arrayBuffer();
      if (health.ok) return { baseUrl: `${origin}/v1` };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`llama-server was not healthy within ${READY_DEADLINE_MS} ms`);
}
