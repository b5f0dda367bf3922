// Test helpers around the scripted ACP agent stand-in: write a script, build a
// provider config that launches it, read back what the agent received.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentScript } from "./scripted-acp-agent.ts";
import type { AcpProviderConfig } from "../../src/execution/acp-executor.ts";

/** Absolute path of the scripted agent entry point. */
export const SCRIPTED_AGENT = join(dirname(fileURLToPath(import.meta.url)), "scripted-acp-agent.ts");

/** A scripted agent on disk: its script file, its log file and a provider config. */
export type ScriptedAgent = { dir: string; scriptPath: string; logPath: string; provider: AcpProviderConfig; log(): AgentLogEntry[] };

/** One line of the agent's NDJSON log. */
export type AgentLogEntry = { pid: number; event: string; [k: string]: unknown };

/** Temporary directories made here, removed when the test process exits. */
export function tempForProcess(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes the script and returns launch config for provider `id`. */
export function scriptedAgent(script: AgentScript, id = "scripted", dir = tempForProcess("ctl-agent-")): ScriptedAgent {
  const scriptPath = join(dir, `${id}.script.json`);
  const logPath = join(dir, `${id}.log.ndjson`);
  writeFileSync(scriptPath, JSON.stringify(script));
  const provider: AcpProviderConfig = {
    id,
    launch: { command: [process.execPath, SCRIPTED_AGENT, scriptPath, logPath] },
    envAllowlist: [],
    restrictedModes: ["read-only"],
    setupTimeoutMs: 10_000,
    killGraceMs: 2_000,
  };
  const log = (): AgentLogEntry[] => existsSync(logPath)
    ? readFileSync(logPath, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as AgentLogEntry)
    : [];
  return { dir, scriptPath, logPath, provider, log };
}
