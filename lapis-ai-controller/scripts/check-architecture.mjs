// The architecture check (AIC-ARCH-001/002): layout, the import matrix and
// package rules of plan.md 4.6, counted-line budgets with a baseline, and no
// stray root files. Reports each violation as `file:line:rule: message`.
//
//   node scripts/check-architecture.mjs [--root DIR] [--update-baseline]
//
// --update-baseline records every file's current counted size as its budget;
// run it in the same change that grows (or shrinks) a file.

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import {
  CONFINED_PACKAGES, FILE_MATRIX, FORBIDDEN_PACKAGES, IMPORT_MATRIX, PRODUCTION_BUDGET, REQUIRED_FILES,
  ROOT_ENTRIES, ROOT_FILES, RUNTIME_SHIM, SEPARATE_SUBFOLDERS, SOURCE_FOLDERS, STALE_MARGIN, TEST_BUDGET,
} from "./architecture-rules.mjs";

const CODE_EXTENSIONS = /\.(ts|mts|mjs|js|cjs)$/;
const BASELINE = "scripts/architecture-baseline.json";
const BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith("_")));

/** Splits source into `code` (comments blanked) and `bare` (comments and string contents blanked), keeping line positions. */
export function stripSource(text) {
  let code = "";
  let bare = "";
  let i = 0;
  const put = (c, keepInCode, keepInBare) => {
    const blank = c === "\n" ? "\n" : " ";
    code += keepInCode ? c : blank;
    bare += keepInBare ? c : blank;
  };
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") put(text[i++], false, false);
    } else if (c === "/" && next === "*") {
      put(text[i++], false, false);
      put(text[i++], false, false);
      while (i < text.length && !(text[i] === "*" && text[i + 1] === "/")) put(text[i++], false, false);
      if (i < text.length) { put(text[i++], false, false); put(text[i++], false, false); }
    } else if (c === "/" && /[(,=:[!&|?{};]\s*$|^\s*$|\breturn\s*$/.test(code.slice(code.lastIndexOf("\n") + 1))) {
      let inClass = false;
      put(text[i++], true, true);
      while (i < text.length && text[i] !== "\n" && (inClass || text[i] !== "/")) {
        if (text[i] === "\\") put(text[i++], true, false);
        else if (text[i] === "[") inClass = true;
        else if (text[i] === "]") inClass = false;
        if (i < text.length && text[i] !== "\n") put(text[i++], true, false);
      }
      if (text[i] === "/") put(text[i++], true, true);
    } else if (c === "'" || c === '"' || c === "`") {
      put(text[i++], true, true);
      while (i < text.length && text[i] !== c && (c === "`" || text[i] !== "\n")) {
        if (text[i] === "\\") put(text[i++], true, false);
        if (i < text.length) put(text[i++], true, false);
      }
      if (i < text.length) put(text[i++], true, true);
    } else {
      put(text[i++], true, true);
    }
  }
  return { code, bare };
}

/** Counts non-blank lines that are not entirely comments. */
export function countedLines(text) {
  return stripSource(text).code.split("\n").filter((line) => line.trim() !== "").length;
}

const SPECIFIER_PATTERNS = [
  /\bfrom\s*["']([^"'\n]+)["']/g,
  /(?:^|[;\s])import\s*["']([^"'\n]+)["']/g,
  /\bimport\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
  /\brequire\s*\(\s*["']([^"'\n]+)["']\s*\)/g,
];

/** Every import specifier of a source text with its 1-based line. */
export function importsOf(text) {
  const { code, bare } = stripSource(text);
  const found = [];
  for (const pattern of SPECIFIER_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      const keyword = match[0].search(/[a-z]/);
      const at = (match.index ?? 0) + keyword;
      if (bare.slice(at, at + 4) !== code.slice(at, at + 4)) continue; // the keyword sits inside a string
      const index = (match.index ?? 0) + match[0].indexOf(match[1]);
      found.push({ specifier: match[1], line: code.slice(0, index).split("\n").length });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

const posix = (path) => path.split(sep).join("/");

/** The matrix module of a path relative to src/: its folder, or `root:<name>` for a root file. */
function moduleOf(srcRelative) {
  const parts = srcRelative.split("/");
  return parts.length === 1 ? `root:${parts[0].replace(/\.ts$/, "")}` : parts[0];
}

function allows(allowed, toModule, toFile) {
  return allowed.includes("*") || allowed.includes(toModule) || allowed.includes(toFile);
}

function readBaseline(root, report) {
  const path = join(root, BASELINE);
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8"));
    if (parsed === null || typeof parsed.budgets !== "object") throw new Error("no budgets");
    return parsed.budgets;
  } catch {
    report(BASELINE, 1, "baseline-invalid", "the baseline is not JSON of the form {\"budgets\": {file: budget}}");
    return {};
  }
}

/** Inside one module: a separate sub-folder may not reach another (SEPARATE_SUBFOLDERS). */
function checkSubfolders(report, file, line, specifier, fromRelative, toRelative) {
  const [module, fromSub] = fromRelative.split("/");
  const toParts = toRelative.split("/");
  for (const rule of SEPARATE_SUBFOLDERS) {
    if (rule.module !== module || toParts.length < 3 || !rule.folders.includes(toParts[1])) continue;
    const fromSeparate = fromRelative.split("/").length >= 3 && rule.folders.includes(fromSub);
    if (fromSeparate && fromSub === toParts[1]) return undefined;
    if (!fromSeparate && fromRelative === `${module}/${rule.facade}`) return undefined;
    return report(file, line, "import-matrix", `src/${module}/${toParts[1]}/ is closed to ${fromSeparate ? `src/${module}/${fromSub}/` : `src/${fromRelative}`} (${specifier})`);
  }
  return undefined;
}

function checkSpecifier(ctx, file, line, specifier) {
  const { root, report, dependencies, devDependencies } = ctx;
  const inSrc = file.startsWith("src/");
  const inSupport = file.startsWith("test/support/");
  if (specifier.startsWith("jsr:")) return report(file, line, "jsr-import", `jsr: imports are forbidden (${specifier})`);
  if (/^(npm|https?|data|file):/.test(specifier)) {
    return report(file, line, "remote-import", `only node: built-ins, npm packages and relative paths may be imported (${specifier})`);
  }
  if (specifier.startsWith(".")) {
    const target = posix(relative(root, resolve(root, dirname(file), specifier)));
    if (!inSrc) return undefined;
    if (!target.startsWith("src/")) return report(file, line, "import-outside-src", `src/ may not import ${specifier}`);
    const fromRelative = file.slice(4);
    const toRelative = target.slice(4);
    const fromModule = moduleOf(fromRelative);
    const toModule = moduleOf(toRelative);
    const fileRule = FILE_MATRIX[fromRelative];
    if (fileRule !== undefined) {
      if (toRelative === fromRelative || allows(fileRule, toModule, toRelative)) return undefined;
      return report(file, line, "import-matrix", `${fromRelative} may import only ${fileRule.join(", ")} (${specifier})`);
    }
    if (toModule === fromModule) return checkSubfolders(report, file, line, specifier, fromRelative, toRelative);
    const allowed = IMPORT_MATRIX[fromModule];
    if (allowed === undefined) return undefined; // reported by the layout rule
    if (allows(allowed, toModule, toRelative)) return undefined;
    return report(file, line, "import-matrix", `'${fromModule}' may not import '${toModule}' (${specifier})`);
  }
  const base = specifier.startsWith("node:") ? specifier.slice(5).split("/")[0] : specifier;
  if (!specifier.startsWith("node:") && BUILTINS.has(specifier.split("/")[0])) {
    return report(file, line, "node-prefix", `built-in modules are imported with the node: prefix (${specifier})`);
  }
  if (FORBIDDEN_PACKAGES.some((pattern) => pattern.test(specifier))) {
    return report(file, line, "forbidden-package", `consuming-app, vault/UI and nostr packages are never imported (${specifier})`);
  }
  for (const rule of CONFINED_PACKAGES) {
    if (!rule.pattern.test(specifier)) continue;
    const ok = inSrc ? rule.folders.some((f) => file.startsWith(`src/${f}/`)) : !rule.support || inSupport;
    if (!ok) return report(file, line, "package-rule", `${specifier} may be imported only under ${rule.folders.map((f) => `src/${f}/`).join(", ")}${rule.support ? " and test/support/" : ""}`);
  }
  if (specifier.startsWith("node:")) {
    return BUILTINS.has(base) || BUILTINS.has(specifier) ? undefined : report(file, line, "unknown-builtin", specifier);
  }
  const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];
  const declared = inSrc ? dependencies : { ...dependencies, ...devDependencies };
  if (!(name in declared)) {
    return report(file, line, "undeclared-package", `${name} is not a ${inSrc ? "production " : ""}dependency in package.json`);
  }
  return undefined;
}

function checkLayout(ctx, files) {
  const { root, report } = ctx;
  for (const entry of readdirSync(root).sort()) {
    if (!ROOT_ENTRIES.includes(entry)) report(entry, 1, "stray-root-file", `the package root holds only ${ROOT_ENTRIES.join(", ")}`);
  }
  for (const file of files.filter((f) => f.startsWith("src/"))) {
    const parts = file.slice(4).split("/");
    if (!file.endsWith(".ts")) report(file, 1, "layout", "src/ holds TypeScript (.ts) files only");
    else if (parts.length === 1 && !ROOT_FILES.includes(parts[0].replace(/\.ts$/, ""))) {
      report(file, 1, "layout", `root files are only the facades and composition roots (${ROOT_FILES.join(", ")})`);
    } else if (parts.length > 1 && !SOURCE_FOLDERS.includes(parts[0])) {
      report(file, 1, "layout", `production source lives under ${SOURCE_FOLDERS.join(", ")}`);
    }
  }
  for (const required of REQUIRED_FILES) {
    if (!files.includes(required)) report(required, 1, "required-file", "this named module must exist (AIC-ARCH-001b/c)");
  }
}

function checkBudgets(ctx, sized, budgets) {
  const { report } = ctx;
  for (const { file, counted, limit } of sized) {
    if (counted > limit) report(file, 1, "size-budget", `${counted} counted lines, budget ${limit}`);
    const budget = budgets[file];
    if (budget === undefined) {
      report(file, 1, "baseline-missing", `not recorded in ${BASELINE} (record it: node scripts/check-architecture.mjs --update-baseline)`);
    } else if (counted > budget) {
      report(file, 1, "baseline-grew", `${counted} counted lines exceed the recorded ${budget}; update ${BASELINE} in the same change`);
    } else if (counted + STALE_MARGIN < budget) {
      report(file, 1, "baseline-stale", `recorded budget ${budget} is more than ${STALE_MARGIN} above the ${counted} counted lines; lower it`);
    }
  }
  const present = new Set(sized.map((s) => s.file));
  for (const file of Object.keys(budgets)) {
    if (!present.has(file)) report(BASELINE, 1, "baseline-stale", `recorded budget for missing file ${file}`);
  }
}

/** Runs the whole check on a package root; returns the violations as `file:line:rule: message` strings. */
export function checkArchitecture(root, options = {}) {
  const violations = [];
  const report = (file, line, rule, message) => violations.push(`${file}:${line}:${rule}: ${message}`);
  let manifest = {};
  try {
    manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  } catch {
    report("package.json", 1, "manifest", "package.json is missing or not JSON");
  }
  // A peer dependency is a production dependency the consumer installs (the native embedding runtime is an optional one).
  const ctx = { root, report, dependencies: { ...(manifest.peerDependencies ?? {}), ...(manifest.dependencies ?? {}) }, devDependencies: manifest.devDependencies ?? {} };
  const files = ["src", "scripts", "test", "bench"].flatMap((dir) => walk(join(root, dir))).map((p) => posix(relative(root, p)));
  checkLayout(ctx, files);
  const sized = [];
  for (const file of files.filter((f) => CODE_EXTENSIONS.test(f))) {
    const text = readFileSync(join(root, file), "utf8");
    const limit = file.startsWith("test/") ? TEST_BUDGET : PRODUCTION_BUDGET;
    sized.push({ file, counted: countedLines(text), limit });
    for (const { specifier, line } of importsOf(text)) checkSpecifier(ctx, file, line, specifier);
    if (file.startsWith("src/") && file !== RUNTIME_SHIM) {
      stripSource(text).bare.split("\n").forEach((lineText, index) => {
        if (/\bDeno\s*(\.|\[)|\bglobalThis\s*\.\s*Deno\b/.test(lineText)) {
          report(file, index + 1, "deno-global", `Deno.* is used only behind ${RUNTIME_SHIM}`);
        }
      });
    }
  }
  if (options.updateBaseline) {
    const budgets = Object.fromEntries(sized.map((s) => [s.file, s.counted]));
    const body = { comment: "Counted-line budget per file (AIC-ARCH-002). Update in the same change that grows or shrinks a file.", budgets };
    mkdirSync(dirname(join(root, BASELINE)), { recursive: true });
    writeFileSync(join(root, BASELINE), `${JSON.stringify(body, null, 2)}\n`);
  }
  checkBudgets(ctx, sized, options.updateBaseline ? Object.fromEntries(sized.map((s) => [s.file, s.counted])) : readBaseline(root, report));
  return { violations, files: sized.length };
}

function main(argv) {
  const rootIndex = argv.indexOf("--root");
  const root = resolve(rootIndex >= 0 ? argv[rootIndex + 1] ?? "." : join(import.meta.dirname, ".."));
  const { violations, files } = checkArchitecture(root, { updateBaseline: argv.includes("--update-baseline") });
  for (const violation of violations) console.error(violation);
  if (violations.length > 0) {
    console.error(`architecture check failed: ${violations.length} violation(s) in ${files} files`);
    return 1;
  }
  console.log(`architecture check passed: ${files} files`);
  return 0;
}

if (resolve(process.argv[1] ?? "") === import.meta.filename) process.exitCode = main(process.argv.slice(2));
