// The memory library ships as `lapis-ai-controller/memory` in the npm
// tarball (JS plus .d.ts) and under the same name on JSR: an application
// installs the package, imports the library, runs a vault memory over a
// directory of Markdown files in its own process, and type-checks (P-ARC-20,
// P-MEM-01).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PACKAGE_ROOT } from "../support/processes.ts";
import { tempDir } from "../support/temp.ts";

const TSC = join(PACKAGE_ROOT, "node_modules", "typescript", "bin", "tsc");

test("P-ARC-20 P-MEM-01 the tarball exports lapis-ai-controller/memory with declarations; a consumer runs and type-checks a vault memory", { timeout: 300_000 }, (t) => {
  const jsr = JSON.parse(readFileSync(join(PACKAGE_ROOT, "jsr.json"), "utf8")) as { exports: Record<string, string> };
  assert.equal(jsr.exports["./memory"], "./src/memory/index.ts");
  const work = tempDir(t, "aic-memory-pkg-");
  const packed = spawnSync(process.execPath, ["--no-warnings", join(PACKAGE_ROOT, "scripts", "stage-snapshot.mjs"), "--pack", work], { cwd: PACKAGE_ROOT, encoding: "utf8", timeout: 240_000 });
  assert.equal(packed.status, 0, packed.stderr);
  const { tarball } = JSON.parse(packed.stdout) as { tarball: string };
  const consumer = join(work, "consumer");
  const installed = join(consumer, "node_modules", "lapis-ai-controller");
  mkdirSync(installed, { recursive: true });
  assert.equal(spawnSync("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], { timeout: 30_000 }).status, 0);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { exports: Record<string, unknown> };
  assert.deepEqual(manifest.exports["./memory"], { types: "./types/memory/index.d.ts", default: "./src/memory/index.js" });
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "memory-consumer", private: true, type: "module" }));
  writeFileSync(join(consumer, "app.ts"), `
import { MarkdownFilesStore, VaultMemory, type EntryRedactorLike, type MemoryCandidate } from "./memory-types.ts";
const passThrough: EntryRedactorLike = { prepare: (entry) => ({ ok: true, type: entry.type, data: { ...entry.data }, changed: false }) };
const vault = new VaultMemory({ store: new MarkdownFilesStore(process.argv[2] ?? "."), redactor: passThrough });
const stored = await vault.ingest({ partition: "user", text: "The user's editor is Helix." });
if (!stored.ok) throw new Error(stored.error.code);
const found = await vault.candidates({ partitions: ["user"], query: "which editor" });
if (!found.ok) throw new Error(found.error.code);
const first: MemoryCandidate | undefined = found.value[0];
process.stdout.write(JSON.stringify({ id: first?.id === stored.value.ref, text: first?.text, origin: first?.origin }));
`);
  writeFileSync(join(consumer, "memory-types.ts"), `
export { MarkdownFilesStore, VaultMemory, type MemoryCandidate } from "lapis-ai-controller/memory";
import type { VaultOptions } from "lapis-ai-controller/memory";
export type EntryRedactorLike = VaultOptions["redactor"];
`);
  const checked = spawnSync(process.execPath, [TSC, "--ignoreConfig", join(consumer, "app.ts"), "--noEmit", "--strict", "--target", "es2024", "--module", "nodenext",
    "--moduleResolution", "nodenext", "--allowImportingTsExtensions", "--types", "node", "--typeRoots", join(PACKAGE_ROOT, "node_modules", "@types")], { cwd: consumer, encoding: "utf8", timeout: 120_000 });
  assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
  const vaultDir = join(work, "vault");
  const ran = spawnSync(process.execPath, [join(consumer, "app.ts"), vaultDir], { cwd: consumer, encoding: "utf8", timeout: 60_000 });
  assert.equal(ran.status, 0, ran.stderr);
  assert.deepEqual(JSON.parse(ran.stdout), { id: true, text: "The user's editor is Helix.", origin: "recall" });
  const files = readdirSync(join(vaultDir, "user", "records"));
  assert.equal(files.length, 1);
  assert.match(readFileSync(join(vaultDir, "user", "records", files[0]!), "utf8"), /^---\nschema: 1\nid: ep-/);
});
