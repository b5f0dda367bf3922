// Stages a JavaScript runtime snapshot of the controller for Deno >= 2.9.5
// (P-CLI-01): every src/**/*.ts stripped to JS (erasable syntax only, so type
// stripping is exact) with relative `.ts` imports renamed `.js`, a trimmed
// package.json and deno.json, and the vendored node_modules of the runtime
// dependency closure. manifest.json lists every file (sha256) and link; the
// digest is the sha256 of the manifest. No `deno compile`.
//
// usage: node scripts/stage-snapshot.mjs [--out DIR] [--note TEXT] [--install [install options...]]
//        node scripts/stage-snapshot.mjs --pack DIR   (the npm tarball of the SDK facades with their .d.ts, P-OPS-03)
//        node scripts/stage-snapshot.mjs --seed DIR   (the SDK's dependency closure into DIR/node_modules, for an offline install)
// --note records an operator's release note in the snapshot only (a local
// override materialized in the snapshot, never in the checkout; P-CLI-08).
// With --install it then runs the STAGED CLI's `install` under the pinned
// Deno, so build metadata comes from staged bytes only (P-CLI-06).
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DENO_FLAGS, MIN_DENO } from "../src/cli/launcher.ts";
import { MANIFEST_FILE, MANIFEST_FORMAT, manifestBytes, scanTree, sha256Hex, SNAPSHOT_ENTRY } from "../src/cli/snapshot.ts";

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function listTs(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = join(dir, name);
    if (lstatSync(abs).isDirectory()) out.push(...listTs(abs));
    else if (name.endsWith(".ts")) out.push(abs);
  }
  return out;
}

/** Relative `./x.ts` specifiers in import/export statements and `new URL("./x.ts", import.meta.url)` (worker modules) become `./x.js`. */
export function renameImports(js) {
  return js
    .replace(/((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+)\.ts(["'])/g, "$1$2.js$3")
    .replace(/(new URL\(\s*["'])(\.{1,2}\/[^"']+)\.ts(["']\s*,\s*import\.meta\.url)/g, "$1$2.js$3");
}

function findPackage(name, fromDir) {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    const parent = dirname(dir);
    if (parent === dir || !parent.startsWith(PACKAGE)) return null;
    dir = parent;
  }
}

/** The runtime dependency closure as package directories under PACKAGE/node_modules. */
function dependencyClosure() {
  const root = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
  const seen = new Set();
  const queue = Object.keys(root.dependencies ?? {}).map((name) => ({ name, from: PACKAGE, optional: false }));
  while (queue.length > 0) {
    const { name, from, optional } = queue.shift();
    const dir = findPackage(name, from);
    if (dir === null) {
      if (optional) continue;
      throw new Error(`dependency not installed: ${name}`);
    }
    if (seen.has(dir)) continue;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const dep of Object.keys(pkg.dependencies ?? {})) queue.push({ name: dep, from: dir, optional: false });
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) queue.push({ name: dep, from: dir, optional: true });
    for (const dep of Object.keys(pkg.peerDependencies ?? {})) queue.push({ name: dep, from: dir, optional: true });
  }
  return [...seen].sort();
}

/** Copies a package directory, without its nested node_modules (those are packages of their own). */
function copyPackage(src, dest) {
  mkdirSync(dest, { recursive: true });
  for (const name of readdirSync(src)) {
    if (name === "node_modules") continue;
    const from = join(src, name);
    const to = join(dest, name);
    const st = lstatSync(from);
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (st.isDirectory()) copyPackage(from, to);
    else if (st.isFile()) {
      copyFileSync(from, to);
      chmodSync(to, st.mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

function writeJs(out) {
  for (const file of listTs(join(PACKAGE, "src"))) {
    const rel = relative(PACKAGE, file).replace(/\.ts$/, ".js");
    const js = renameImports(stripTypeScriptTypes(readFileSync(file, "utf8"), { mode: "strip" }));
    mkdirSync(dirname(join(out, rel)), { recursive: true });
    writeFileSync(join(out, rel), js.replace(/^#!.*\n/, ""));
  }
}

/** The public SDK facades a consumer imports (plan 4.5). */
export const FACADES = ["client", "runtime", "managed", "contracts"];

/** Library entry points below src/, exported as `./<name>` (the memory library, issue 30). */
export const LIBRARY_EXPORTS = { memory: "memory/index" };

/** Declaration files of the facades, emitted by the pinned tsc into `typesDir` with `./x.ts` specifiers renamed `./x.js`. */
export function writeTypes(typesDir) {
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  const entries = [...FACADES, ...Object.values(LIBRARY_EXPORTS)].map((f) => join(PACKAGE, "src", `${f}.ts`));
  const run = spawnSync(process.execPath, [tsc, "--ignoreConfig", ...entries, "--target", "es2024", "--module", "nodenext", "--moduleResolution", "nodenext",
    "--types", "node", "--strict", "--erasableSyntaxOnly", "--verbatimModuleSyntax", "--allowImportingTsExtensions", "--rewriteRelativeImportExtensions",
    "--skipLibCheck", "--declaration", "--emitDeclarationOnly", "--rootDir", join(PACKAGE, "src"), "--outDir", typesDir], { cwd: PACKAGE, encoding: "utf8", timeout: 120_000 });
  if (run.status !== 0) throw new Error(`tsc --declaration failed: ${run.stdout}${run.stderr}`);
  const rename = (dir) => {
    for (const name of readdirSync(dir)) {
      const abs = join(dir, name);
      if (lstatSync(abs).isDirectory()) rename(abs);
      else if (name.endsWith(".d.ts")) writeFileSync(abs, renameImports(readFileSync(abs, "utf8")));
    }
  };
  rename(typesDir);
}

/** Builds the npm tarball of the SDK facades in `dir` (JS and their .d.ts); returns its path and sha256. */
export function pack(dir) {
  const root = join(dir, "package");
  mkdirSync(root, { recursive: true });
  writeJs(root);
  writeTypes(join(root, "types"));
  const pkg = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
  const exports = Object.fromEntries([...FACADES.map((f) => [f, f]), ...Object.entries(LIBRARY_EXPORTS)]
    .map(([name, f]) => [`./${name}`, { types: `./types/${f}.d.ts`, default: `./src/${f}.js` }]));
  const manifest = { name: pkg.name, version: pkg.version, description: pkg.description, type: "module", license: pkg.license, engines: pkg.engines, exports, types: "./types/client.d.ts", files: ["src", "types", "README.md"], dependencies: pkg.dependencies,
    peerDependencies: pkg.peerDependencies, peerDependenciesMeta: pkg.peerDependenciesMeta };
  writeFileSync(join(root, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  copyFileSync(join(PACKAGE, "README.md"), join(root, "README.md"));
  const run = spawnSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: root, encoding: "utf8", timeout: 120_000 });
  if (run.status !== 0) throw new Error(`npm pack failed: ${run.stderr}`);
  const tarball = join(dir, JSON.parse(run.stdout)[0].filename);
  return { tarball, sha256: sha256Hex(readFileSync(tarball)) };
}

/**
 * Copies the SDK's runtime dependency closure from this package's own
 * node_modules (what `npm ci` installed) into `appDir/node_modules`, with the
 * bin links npm made for them, so `npm install --offline` of the tarball
 * there needs no registry and no cache: a fresh clone installs the chat app
 * with the network it had for `npm ci`, or none.
 */
export function seedModules(appDir) {
  const closure = dependencyClosure();
  for (const dir of closure) {
    const dest = join(appDir, relative(PACKAGE, dir));
    rmSync(dest, { recursive: true, force: true });
    copyPackage(dir, dest);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const bins = typeof pkg.bin === "string" ? [pkg.name.split("/").pop()] : Object.keys(pkg.bin ?? {});
    const modulesDir = pkg.name.startsWith("@") ? dirname(dirname(dir)) : dirname(dir);
    for (const bin of bins) {
      const link = join(modulesDir, ".bin", bin);
      if (!existsSync(link) || !lstatSync(link).isSymbolicLink()) continue;
      const target = join(appDir, relative(PACKAGE, link));
      mkdirSync(dirname(target), { recursive: true });
      rmSync(target, { force: true });
      symlinkSync(readlinkSync(link), target);
    }
  }
  return closure.length;
}

/** Stages the snapshot into `out`; returns its digest. */
export function stage(out, note) {
  mkdirSync(out, { recursive: true });
  if (note !== undefined) writeFileSync(join(out, "release-note.txt"), `${note}\n`);
  writeJs(out);
  const pkg = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
  writeFileSync(join(out, "package.json"), `${JSON.stringify({ name: pkg.name, version: pkg.version, type: "module", private: true, dependencies: pkg.dependencies }, null, 2)}\n`);
  writeFileSync(join(out, "deno.json"), `${JSON.stringify({ nodeModulesDir: "manual", lock: false }, null, 2)}\n`);
  for (const dir of dependencyClosure()) copyPackage(dir, join(out, relative(PACKAGE, dir)));
  const entries = scanTree(out);
  if (typeof entries === "string") throw new Error(`cannot stage: ${entries}`);
  const text = manifestBytes({ format: MANIFEST_FORMAT, name: pkg.name, version: pkg.version, minDeno: MIN_DENO, entry: SNAPSHOT_ENTRY, entries });
  writeFileSync(join(out, MANIFEST_FILE), text);
  return sha256Hex(text);
}

function main(argv) {
  const seedIndex = argv.indexOf("--seed");
  if (seedIndex !== -1) {
    process.stdout.write(`${JSON.stringify({ packages: seedModules(resolve(argv[seedIndex + 1])) })}\n`);
    return 0;
  }
  const packIndex = argv.indexOf("--pack");
  if (packIndex !== -1) {
    process.stdout.write(`${JSON.stringify(pack(resolve(argv[packIndex + 1])))}\n`);
    return 0;
  }
  const outIndex = argv.indexOf("--out");
  const installIndex = argv.indexOf("--install");
  const out = outIndex === -1 ? mkdtempSync(join(tmpdir(), "aic-stage-")) : resolve(argv[outIndex + 1]);
  // A staging folder this script made for an install is its own to remove, whatever the outcome (D5:
  // it is ~90 MB); one named by --out, or kept for the caller without --install, stays.
  const temporary = outIndex === -1 && installIndex !== -1;
  try {
    return stageAndInstall(argv, out, installIndex);
  } finally {
    if (temporary) rmSync(out, { recursive: true, force: true, maxRetries: 3 });
  }
}

function stageAndInstall(argv, out, installIndex) {
  const noteIndex = argv.indexOf("--note");
  const digest = stage(out, noteIndex === -1 ? undefined : argv[noteIndex + 1]);
  process.stdout.write(`${JSON.stringify({ staged: out, digest })}\n`);
  if (installIndex === -1) return 0;
  const deno = process.env.LAPIS_AI_CONTROLLER_DENO ?? join(PACKAGE, "node_modules", "deno", "deno");
  // Everything after --install goes to the staged `install`, except this script's own options.
  const passed = [];
  for (let i = installIndex + 1; i < argv.length; i += 1) {
    if (argv[i] === "--note" || argv[i] === "--out") i += 1;
    else if (argv[i] !== "--") passed.push(argv[i]);
  }
  const args = ["run", ...DENO_FLAGS, "--config", join(out, "deno.json"), join(out, SNAPSHOT_ENTRY), "install", "--from", out, "--digest", digest, ...passed];
  const run = spawnSync(deno, args, { stdio: "inherit", cwd: out });
  return run.status ?? 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
