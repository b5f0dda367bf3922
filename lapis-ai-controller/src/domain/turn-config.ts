// Validation of the engine's configuration sections (ours, documented in
// docs/protocol.md): `workspaces`, `providers` and `limits.turns`. Failures
// name a key path, never a value.
import { TRANSCRIPT_STORE_CAPS, TRANSCRIPT_STORE_DEFAULTS, type TranscriptStoreLimits } from "./transcript-store.ts";
import { controllerError, err, ok, type Result } from "./errors.ts";
import type { VcsIdentity } from "./executor-port.ts";
import type { Json } from "./records.ts";
import type { TurnLimits } from "./turn-service.ts";
import { CONTEXT_LIMIT_CAPS, CONTEXT_LIMIT_DEFAULTS, type ContextLimits } from "./turn-preparation.ts";
import { MEMORY_LIMIT_CAPS, MEMORY_LIMIT_DEFAULTS, type MemoryLimits } from "./memory-budget.ts";
import type { WorkspaceIdentity } from "./workspace-lease.ts";

/** Which executor drives a provider: an ACP agent, or Codex natively over its app-server. */
export type ProviderKind = "acp" | "codex-app-server";
export const PROVIDER_KINDS: readonly ProviderKind[] = ["acp", "codex-app-server"];

/** One configured provider, before the executor adapts it. */
export type ProviderDefinition = {
  id: string;
  kind: ProviderKind;
  agent?: string;
  command?: readonly string[];
  nodePath?: string;
  /** The native (ACP session) mode requested by default. */
  mode?: string;
  envAllowlist: readonly string[];
  restrictedModes: readonly string[];
  vcsIdentity: VcsIdentity | null;
  setupTimeoutMs: number;
  killGraceMs: number;
};

/** The engine configuration. */
export type EngineConfig = { workspaces: WorkspaceIdentity[]; providers: ProviderDefinition[]; limits: Partial<TurnLimits>; context: Partial<ContextLimits>; memory: MemoryLimits; transcript: Partial<TranscriptStoreLimits> };

const TURN_KEYS = ["cancelConfirmMs", "interactionDeadlineMs", "historySeedMaxChars", "contextDeadlineMs", "contextMaxChars", "memoryMaxTokens", "memoryMaxCandidates", "transcriptDeadlineMs", "transcriptBatchMax"];

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const VCS_NAME = /^[^\u0000-\u001f\u007f<>]{1,128}$/;
const VCS_EMAIL = /^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,32}$/;
const MAX_LIST = 64;

class Bad extends Error {}

function obj(v: Json | undefined, path: string): { readonly [k: string]: Json } {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Bad(path);
  return v as { readonly [k: string]: Json };
}

function strList(v: Json | undefined, path: string, pattern: RegExp | null): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.length > MAX_LIST) throw new Bad(path);
  return v.map((x, i) => {
    if (typeof x !== "string" || x.length === 0 || x.length > 4096 || (pattern && !pattern.test(x))) throw new Bad(`${path}.${i}`);
    return x;
  });
}

function int(v: Json | undefined, path: string, def: number, max: number): number {
  if (v === undefined) return def;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > max) throw new Bad(path);
  return v;
}

/** Validates a vcsIdentity: printable name, plain email, no other keys (P-PRV-04). */
export function parseVcsIdentity(raw: unknown, path: string): { ok: true; value: VcsIdentity | null } | { ok: false; code: "config_invalid"; path: string } {
  if (raw === undefined || raw === null) return { ok: true, value: null };
  if (typeof raw !== "object" || Array.isArray(raw)) return { ok: false, code: "config_invalid", path };
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) if (k !== "name" && k !== "email") return { ok: false, code: "config_invalid", path: `${path}.${k}` };
  if (typeof r.name !== "string" || !VCS_NAME.test(r.name) || r.name.trim() !== r.name) return { ok: false, code: "config_invalid", path: `${path}.name` };
  if (typeof r.email !== "string" || !VCS_EMAIL.test(r.email)) return { ok: false, code: "config_invalid", path: `${path}.email` };
  return { ok: true, value: { name: r.name, email: r.email } };
}

function provider(id: string, raw: Json, path: string): ProviderDefinition {
  const p = obj(raw, path);
  const known = ["kind", "agent", "command", "nodePath", "mode", "envAllowlist", "restrictedModes", "vcsIdentity", "setupTimeoutMs", "killGraceMs"];
  for (const k of Object.keys(p)) if (!known.includes(k)) throw new Bad(`${path}.${k}`);
  const kind = p.kind ?? "acp";
  if (typeof kind !== "string" || !(PROVIDER_KINDS as readonly string[]).includes(kind)) throw new Bad(`${path}.kind`);
  const def: ProviderDefinition = {
    id,
    kind: kind as ProviderKind,
    envAllowlist: strList(p.envAllowlist, `${path}.envAllowlist`, ENV_NAME),
    restrictedModes: p.restrictedModes === undefined ? ["read-only"] : strList(p.restrictedModes, `${path}.restrictedModes`, ID),
    vcsIdentity: null,
    setupTimeoutMs: int(p.setupTimeoutMs, `${path}.setupTimeoutMs`, 60_000, 300_000),
    killGraceMs: int(p.killGraceMs, `${path}.killGraceMs`, 5_000, 30_000),
  };
  const vcs = parseVcsIdentity(p.vcsIdentity, `${path}.vcsIdentity`);
  if (!vcs.ok) throw new Bad(vcs.path);
  def.vcsIdentity = vcs.value;
  if (p.agent !== undefined) {
    if (typeof p.agent !== "string" || !ID.test(p.agent)) throw new Bad(`${path}.agent`);
    def.agent = p.agent;
  }
  if (p.mode !== undefined) {
    if (typeof p.mode !== "string" || !ID.test(p.mode)) throw new Bad(`${path}.mode`);
    def.mode = p.mode;
  }
  if (p.command !== undefined) def.command = strList(p.command, `${path}.command`, null);
  if (p.nodePath !== undefined) {
    if (typeof p.nodePath !== "string" || !p.nodePath.startsWith("/")) throw new Bad(`${path}.nodePath`);
    def.nodePath = p.nodePath;
  }
  const noCommand = def.command === undefined || def.command.length === 0;
  if (def.kind === "codex-app-server") {
    // Native Codex: the installed @openai/codex by default, or an explicit argv; no registry agent.
    if (def.agent !== undefined) throw new Bad(`${path}.agent`);
    if (def.command !== undefined && noCommand) throw new Bad(`${path}.command`);
  } else if ((def.agent === undefined) === noCommand) throw new Bad(`${path}.command`);
  return def;
}

/** Parses the engine sections; an absent section is empty. */
export function parseEngineConfig(sections: Readonly<Record<string, Json>>): Result<EngineConfig> {
  try {
    const workspaces: WorkspaceIdentity[] = [];
    if (sections.workspaces !== undefined) {
      for (const [id, v] of Object.entries(obj(sections.workspaces, "workspaces"))) {
        if (!ID.test(id)) throw new Bad(`workspaces.${id.slice(0, 64)}`);
        const root = typeof v === "string" ? v : obj(v, `workspaces.${id}`).root;
        if (typeof root !== "string" || !root.startsWith("/")) throw new Bad(`workspaces.${id}.root`);
        workspaces.push({ id, root });
      }
    }
    const providers: ProviderDefinition[] = [];
    if (sections.providers !== undefined) {
      for (const [id, v] of Object.entries(obj(sections.providers, "providers"))) {
        if (!ID.test(id)) throw new Bad(`providers.${id.slice(0, 64)}`);
        providers.push(provider(id, v, `providers.${id}`));
      }
    }
    const limits: Partial<TurnLimits> = {};
    const context: Partial<ContextLimits> = {};
    const memory: MemoryLimits = { ...MEMORY_LIMIT_DEFAULTS };
    const transcript: Partial<TranscriptStoreLimits> = {};
    const l = sections.limits === undefined ? undefined : obj(sections.limits, "limits").turns;
    if (l !== undefined) {
      const t = obj(l, "limits.turns");
      for (const k of Object.keys(t)) if (!TURN_KEYS.includes(k)) throw new Bad(`limits.turns.${k}`);
      if (t.cancelConfirmMs !== undefined) limits.cancelConfirmMs = int(t.cancelConfirmMs, "limits.turns.cancelConfirmMs", 30_000, 600_000);
      if (t.interactionDeadlineMs !== undefined) limits.interactionDeadlineMs = int(t.interactionDeadlineMs, "limits.turns.interactionDeadlineMs", 600_000, 3_600_000);
      if (t.historySeedMaxChars !== undefined) limits.historySeedMaxChars = int(t.historySeedMaxChars, "limits.turns.historySeedMaxChars", 1_000_000, 4_000_000);
      for (const k of ["contextDeadlineMs", "contextMaxChars"] as const) {
        if (t[k] !== undefined) context[k] = int(t[k], `limits.turns.${k}`, CONTEXT_LIMIT_DEFAULTS[k], CONTEXT_LIMIT_CAPS[k]);
      }
      for (const k of ["memoryMaxTokens", "memoryMaxCandidates"] as const) memory[k] = int(t[k], `limits.turns.${k}`, MEMORY_LIMIT_DEFAULTS[k], MEMORY_LIMIT_CAPS[k]);
      for (const k of ["transcriptDeadlineMs", "transcriptBatchMax"] as const) {
        if (t[k] !== undefined) transcript[k] = int(t[k], `limits.turns.${k}`, TRANSCRIPT_STORE_DEFAULTS[k], TRANSCRIPT_STORE_CAPS[k]);
      }
    }
    return ok({ workspaces, providers, limits, context, memory, transcript });
  } catch (e) {
    if (e instanceof Bad) return err(controllerError("config_invalid", { where: e.message }));
    throw e;
  }
}
