// The owner token: config tokens name it by `env:NAME`; its value comes from
// the environment or, for an installed controller, from the owner-only token
// file beside the config (KEY=VALUE lines, mode 0600, written once by
// install). `token show` is the only command that prints token bytes
// (P-CLI-14); everything else only learns whether the reference resolves.

import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Json } from "../domain/records.ts";

/** The env name install's config uses for the owner token. */
export const OWNER_TOKEN_ENV = "LAPIS_AI_CONTROLLER_TOKEN";
const LINE = /^([A-Za-z_][A-Za-z0-9_]{0,127})=(\S{1,4096})$/;
const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]{0,127})$/;
/** Largest token file read. */
export const TOKEN_FILE_MAX_BYTES = 64 * 1024;

/** Reads the token file into a map; a missing or malformed file gives an empty map. */
export function readTokenFile(path: string): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  let text: string;
  try {
    const bytes = readFileSync(path);
    if (bytes.length > TOKEN_FILE_MAX_BYTES) return out;
    text = bytes.toString("utf8");
  } catch {
    return out;
  }
  for (const line of text.split("\n")) {
    const m = LINE.exec(line.trim());
    if (m !== null) out.set(m[1] as string, m[2] as string);
  }
  return out;
}

/** An env lookup that falls back to the token file for names the environment lacks. */
export function tokenEnv(env: (name: string) => string | undefined, tokenFile: string): (name: string) => string | undefined {
  let file: ReadonlyMap<string, string> | undefined;
  return (name) => {
    const value = env(name);
    if (value !== undefined) return value;
    file ??= readTokenFile(tokenFile);
    return file.get(name);
  };
}

/** A fresh token: 32 random bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Writes the token file (0600) when it is missing; an existing one is never rewritten. */
export function ensureTokenFile(path: string): "created" | "kept" {
  if (existsSync(path)) return "kept";
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.tmp-${process.pid}`;
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, `${OWNER_TOKEN_ENV}=${newToken()}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  return "created";
}

/** The env name of the owner's token reference in the config's `tokens`, if any. */
export function ownerTokenRef(tokens: Json | undefined): string | null {
  if (!Array.isArray(tokens)) return null;
  const entries = tokens.filter((t): t is { [key: string]: Json } => t !== null && typeof t === "object" && !Array.isArray(t));
  const owner = entries.find((t) => (t.principal ?? "owner") === "owner" && (t.application ?? "owner") === "owner") ?? entries[0];
  const m = typeof owner?.token === "string" ? ENV_REF.exec(owner.token) : null;
  return m === null ? null : (m[1] as string);
}

/** Resolves the owner token, or null (the caller reports `token_unavailable`). */
export function resolveOwnerToken(tokens: Json | undefined, env: (name: string) => string | undefined): string | null {
  const name = ownerTokenRef(tokens);
  return name === null ? null : (env(name) ?? null);
}
