// Run under Deno by acp-launch tests (P-PRV-02): resolves the "codex" agent
// through the acpx registry against the installed-adapter fixture, starts it
// with AcpExecutor and runs one turn; prints one JSON line.
import { AcpExecutor } from "../../src/execution/acp-executor.ts";
import { currentLaunchHost, resolveLaunch } from "../../src/execution/acp-launch.ts";
import type { ExecutorEvent } from "../../src/execution/executor.ts";

const [fixtureRoot, cwd] = process.argv.slice(2) as [string, string];
const host = { ...currentLaunchHost(), resolvePackageRoot: (name: string) => (name === "@agentclientprotocol/codex-acp" ? fixtureRoot : undefined) };
const launch = resolveLaunch({ agent: "codex" }, host);
const ex = new AcpExecutor({
  providers: [{ id: "codex", launch: { agent: "codex" }, envAllowlist: [], restrictedModes: ["read-only"], setupTimeoutMs: 20_000, killGraceMs: 2_000 }],
  host, env: process.env, tmpRoot: cwd,
});
const prepared = await ex.prepare({ sessionKey: "k", providerId: "codex", cwd, restricted: false, requestedMode: null, vcsIdentity: null, envGrants: {} });
let outcome: unknown = null;
const events: ExecutorEvent[] = [];
if (prepared.ok) outcome = await prepared.session.dispatch("hello", { event: (e) => events.push(e), permission: async () => ({ outcome: "cancelled" }) });
await ex.close();
console.log(JSON.stringify({ isDeno: host.isDeno, execPath: host.execPath, launch, prepared: prepared.ok ? "ok" : prepared.code, outcome, text: events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("") }));
