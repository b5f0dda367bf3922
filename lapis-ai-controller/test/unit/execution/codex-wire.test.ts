// The native executor's wire manifest against the installed Codex: the test
// runs `codex app-server generate-json-schema` into a temp dir and fails when
// a method, field or closed value set the executor relies on changed, so a
// Codex upgrade is caught here rather than by a user's turn.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { currentLaunchHost } from "../../../src/execution/acp-launch.ts";
import { resolveCodexLaunch } from "../../../src/execution/codex-launch.ts";
import {
  APPROVAL_DECISIONS, CLIENT_NOTIFICATIONS, COMPACTION_ITEM_TYPE, CLIENT_REQUESTS, ELICITATION_ACTIONS, ELICITATION_MODES, REASONING_ITEM_FIELDS, RELIED_FIELDS, SANDBOX_MODES,
  SERVER_NOTIFICATIONS, SERVER_REQUESTS, TEXT_INPUT_FIELDS, TOOL_ITEM_TYPES, TURN_STATUSES,
} from "../../../src/execution/codex-wire.ts";
import { tempDir } from "../../support/temp.ts";

type Schema = { [k: string]: unknown; properties?: Record<string, unknown>; oneOf?: Schema[]; anyOf?: Schema[]; enum?: unknown[]; definitions?: Record<string, Schema>; title?: string };

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else if (name.endsWith(".json")) out.push(p);
  }
  return out;
}

/** Every named definition across the generated files. */
function generated(t: Parameters<typeof tempDir>[0]): { defs: Map<string, Schema>; roots: Map<string, Schema> } {
  const out = tempDir(t, "codex-schema-");
  const r = resolveCodexLaunch({}, currentLaunchHost());
  assert.equal(r.ok, true);
  if (!r.ok) throw new Error("unreachable");
  const args = [...r.launch.args.slice(0, -1), "app-server", "generate-json-schema", "--out", out];
  const run = spawnSync(r.launch.command, args, { encoding: "utf8", timeout: 60_000, env: { PATH: process.env.PATH ?? "", HOME: out, CODEX_HOME: out } });
  assert.equal(run.status, 0, run.stderr);
  const defs = new Map<string, Schema>();
  const roots = new Map<string, Schema>();
  for (const f of files(out)) {
    const j = JSON.parse(readFileSync(f, "utf8")) as Schema;
    if (typeof j.title === "string") { roots.set(j.title, j); if (!defs.has(j.title)) defs.set(j.title, j); }
    for (const [k, v] of Object.entries(j.definitions ?? {})) if (!defs.has(k)) defs.set(k, v);
  }
  return { defs, roots };
}

function methods(root: Schema | undefined): string[] {
  return (root?.oneOf ?? []).flatMap((o) => ((o.properties?.method as Schema | undefined)?.enum ?? []) as string[]);
}

function stringEnum(s: Schema | undefined): string[] {
  if (!s) return [];
  if (Array.isArray(s.enum)) return s.enum.filter((x): x is string => typeof x === "string");
  return (s.oneOf ?? []).flatMap((o) => (Array.isArray(o.enum) ? o.enum.filter((x): x is string => typeof x === "string") : []));
}

function variantTags(s: Schema | undefined, tag: string): string[] {
  return (s?.oneOf ?? []).flatMap((o) => ((o.properties?.[tag] as Schema | undefined)?.enum ?? []) as string[]);
}

test("P-PRV-16 P-PRV-17 P-PRV-18 P-RSN-02 the installed Codex's generated schema still has every shape the native executor relies on", { timeout: 90_000 }, (t) => {
  const { defs, roots } = generated(t);
  const clientRequests = methods(roots.get("ClientRequest"));
  for (const m of CLIENT_REQUESTS) assert.ok(clientRequests.includes(m), `client request ${m}`);
  const clientNotes = methods(roots.get("ClientNotification"));
  for (const m of CLIENT_NOTIFICATIONS) assert.ok(clientNotes.includes(m), `client notification ${m}`);
  const serverNotes = methods(roots.get("ServerNotification"));
  for (const m of SERVER_NOTIFICATIONS) assert.ok(serverNotes.includes(m), `server notification ${m}`);
  const serverRequests = methods(roots.get("ServerRequest"));
  for (const m of SERVER_REQUESTS) assert.ok(serverRequests.includes(m), `server request ${m}`);
  for (const [name, fields] of Object.entries(RELIED_FIELDS)) {
    const def = defs.get(name);
    assert.ok(def, `definition ${name}`);
    for (const f of fields) assert.ok(def.properties !== undefined && f in def.properties, `${name}.${f}`);
  }
  // Closed sets the executor maps exhaustively must be exactly these.
  assert.deepEqual(stringEnum(defs.get("TurnStatus")).sort(), [...TURN_STATUSES].sort());
  assert.deepEqual(stringEnum(defs.get("McpServerElicitationAction")).sort(), [...ELICITATION_ACTIONS].sort());
  assert.deepEqual(stringEnum(defs.get("FileChangeApprovalDecision")).sort(), [...APPROVAL_DECISIONS].sort());
  assert.deepEqual(stringEnum(defs.get("CommandExecutionApprovalDecision")).sort(), [...APPROVAL_DECISIONS].sort());
  assert.deepEqual(stringEnum(defs.get("SandboxMode")).sort(), [...SANDBOX_MODES].sort());
  // Tagged unions: the text input variant, the tool item types, the elicitation modes.
  const text = defs.get("UserInput")?.oneOf?.find((o) => ((o.properties?.type as Schema | undefined)?.enum ?? []).includes("text"));
  assert.ok(text, "UserInput text variant");
  for (const f of TEXT_INPUT_FIELDS) assert.ok(text.properties !== undefined && f in text.properties, `UserInput.text.${f}`);
  const reasoning = defs.get("ThreadItem")?.oneOf?.find((o) => ((o.properties?.type as Schema | undefined)?.enum ?? []).includes("reasoning"));
  assert.ok(reasoning, "ThreadItem reasoning variant");
  for (const f of REASONING_ITEM_FIELDS) assert.ok(reasoning.properties !== undefined && f in reasoning.properties, `ThreadItem.reasoning.${f}`);
  const items = variantTags(defs.get("ThreadItem"), "type");
  for (const k of [...TOOL_ITEM_TYPES, "agentMessage", "reasoning", COMPACTION_ITEM_TYPE]) assert.ok(items.includes(k), `ThreadItem ${k}`);
  const modes = variantTags(defs.get("McpServerElicitationRequestParams"), "mode");
  for (const m of ELICITATION_MODES) assert.ok(modes.includes(m), `elicitation mode ${m}`);
  const approval = stringEnum(defs.get("AskForApproval"));
  for (const p of ["on-request", "never", "untrusted"]) assert.ok(approval.includes(p), `AskForApproval ${p}`);
});
