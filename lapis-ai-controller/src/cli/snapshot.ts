// Release snapshots (P-CLI-01..06): a directory of JavaScript, JSON and the
// vendored node_modules of the runtime dependencies, described by
// manifest.json (sha256 and mode of every file, target of every link).
// The release digest is the sha256 of the manifest bytes, so the build
// identity comes from staged bytes and never from the live checkout.

import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** The manifest file name at the snapshot root (not listed in itself). */
export const MANIFEST_FILE = "manifest.json";
/** The manifest format tag. */
export const MANIFEST_FORMAT = "lapis-ai-controller-snapshot/1";
/** The snapshot's entry module, relative to its root. */
export const SNAPSHOT_ENTRY = "src/main.js";
/** Most entries a snapshot may hold (a cap on the walk). */
export const MAX_ENTRIES = 50_000;

/** One manifest entry: a regular file or a symbolic link. */
export type ManifestEntry =
  | { readonly path: string; readonly type: "file"; readonly mode: number; readonly size: number; readonly sha256: string }
  | { readonly path: string; readonly type: "link"; readonly target: string };

/** The manifest of one snapshot. */
export interface Manifest {
  readonly format: string;
  readonly name: string;
  readonly version: string;
  readonly minDeno: string;
  readonly entry: string;
  readonly entries: readonly ManifestEntry[];
}

/** The sha256 of bytes, hex. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Serializes a manifest canonically (entries sorted by path). */
export function manifestBytes(manifest: Manifest): string {
  const entries = [...manifest.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return `${JSON.stringify({ ...manifest, entries }, null, 1)}\n`;
}

/** A link stays inside the snapshot when its target resolves under the root. */
export function linkContained(root: string, linkPath: string, target: string): boolean {
  if (isAbsolute(target)) return false;
  const resolved = resolve(dirname(join(root, linkPath)), target);
  const rel = relative(root, resolved);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** Lists every file and link under `root` (directories implied), as manifest entries. */
export function scanTree(root: string): ManifestEntry[] | "too_many" | "unsupported_entry" {
  const out: ManifestEntry[] = [];
  const walk = (dir: string): "too_many" | "unsupported_entry" | null => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const rel = relative(root, abs).split(sep).join("/");
      if (rel === MANIFEST_FILE) continue;
      const st = lstatSync(abs);
      if (out.length >= MAX_ENTRIES) return "too_many";
      if (st.isSymbolicLink()) out.push({ path: rel, type: "link", target: readlinkSync(abs) });
      else if (st.isDirectory()) {
        const nested = walk(abs);
        if (nested !== null) return nested;
      } else if (st.isFile()) {
        const bytes = readFileSync(abs);
        // Only the executable bit is kept: releases are made read-only on install.
        out.push({ path: rel, type: "file", mode: st.mode & 0o111 ? 0o555 : 0o444, size: bytes.length, sha256: sha256Hex(bytes) });
      } else return "unsupported_entry";
    }
    return null;
  };
  const failed = walk(root);
  return failed ?? out;
}

/** Why a snapshot failed verification (a code and the entry path, never content). */
export type VerifyProblem = { readonly problem: string; readonly path?: string };

/**
 * Verifies the snapshot at `root` against its manifest and the expected
 * digest: the manifest hashes to the digest, every listed file has its bytes,
 * every link its target (inside the snapshot), and nothing else is there.
 */
export function verifySnapshot(root: string, expectedDigest: string): { ok: true; manifest: Manifest } | { ok: false; failure: VerifyProblem } {
  let text: string;
  try {
    text = readFileSync(join(root, MANIFEST_FILE), "utf8");
  } catch {
    return { ok: false, failure: { problem: "manifest_missing" } };
  }
  if (sha256Hex(text) !== expectedDigest) return { ok: false, failure: { problem: "digest_mismatch" } };
  let manifest: Manifest;
  try {
    manifest = JSON.parse(text) as Manifest;
  } catch {
    return { ok: false, failure: { problem: "manifest_invalid" } };
  }
  if (manifest.format !== MANIFEST_FORMAT || !Array.isArray(manifest.entries)) return { ok: false, failure: { problem: "manifest_invalid" } };
  const actual = scanTree(root);
  if (typeof actual === "string") return { ok: false, failure: { problem: actual } };
  const byPath = new Map(actual.map((e) => [e.path, e]));
  for (const want of manifest.entries) {
    const got = byPath.get(want.path);
    if (got === undefined) return { ok: false, failure: { problem: "entry_missing", path: want.path } };
    byPath.delete(want.path);
    if (want.type === "link") {
      if (got.type !== "link" || got.target !== want.target) return { ok: false, failure: { problem: "link_mismatch", path: want.path } };
      if (!linkContained(root, want.path, want.target)) return { ok: false, failure: { problem: "link_escapes", path: want.path } };
    } else if (got.type !== "file" || got.sha256 !== want.sha256 || got.size !== want.size) {
      return { ok: false, failure: { problem: "file_mismatch", path: want.path } };
    }
  }
  const extra = [...byPath.keys()][0];
  if (extra !== undefined) return { ok: false, failure: { problem: "entry_unlisted", path: extra } };
  return { ok: true, manifest };
}

/** The build identity of a snapshot: the digest of its manifest, or null outside a snapshot. */
export function buildIdentity(snapshotRoot: string): { digest: string; version: string } | null {
  try {
    const text = readFileSync(join(snapshotRoot, MANIFEST_FILE), "utf8");
    const manifest = JSON.parse(text) as Manifest;
    return { digest: sha256Hex(text), version: String(manifest.version) };
  } catch {
    return null;
  }
}

/** Compares dotted versions; true when `actual` >= `minimum`. */
export function versionAtLeast(actual: string, minimum: string): boolean {
  const parse = (v: string) => (v.match(/^(\d+)\.(\d+)\.(\d+)/) ?? []).slice(1).map(Number);
  const a = parse(actual);
  const m = parse(minimum);
  if (a.length !== 3 || m.length !== 3) return false;
  for (let i = 0; i < 3; i += 1) if ((a[i] as number) !== (m[i] as number)) return (a[i] as number) > (m[i] as number);
  return true;
}
