// A FIXTURE package directory named like the codex ACP adapter whose bin runs
// the scripted ACP agent stand-in. It lets the acpx registry's real
// "installed" resolution run without the 300 MB Codex download; it is never
// shipped and never described as codex-acp.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SCRIPTED_AGENT } from "./scripted-agent-fixture.ts";

/** Writes the fixture under `dir`; returns its package root. */
export function installedAdapterFixture(dir: string, scriptPath: string, logPath: string): string {
  const root = join(dir, "fixture-node-modules", "@agentclientprotocol", "codex-acp");
  mkdirSync(join(root, "dist"), { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ name: "@agentclientprotocol/codex-acp", version: "1.13.1-fixture", bin: { "codex-acp": "dist/index.js" }, type: "module" }));
  writeFileSync(join(root, "dist", "index.js"), `process.argv.splice(2, 0, ${JSON.stringify(scriptPath)}, ${JSON.stringify(logPath)});\nawait import(${JSON.stringify(SCRIPTED_AGENT)});\n`);
  return root;
}
