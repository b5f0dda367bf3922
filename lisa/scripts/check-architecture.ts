// Enforces the layout of src/ (layers below): the import matrix
// between its modules, pointing downward only, no import circle between
// files, and the size budget
// (production files <= 300 counted lines, tests <= 500). Counted lines are
// non-blank and not comments. Prints file:line: rule.
//
// Layers, lowest first: errors, log; http (Lisa's own HTTP client); config,
// state, web, render, matrix;
// tools, rooms (room diagnosis over matrix), e2ee (encrypted rooms over matrix and
// state); llm, context, ingest; invocation;
// app (the running service) and check (`lisa check`'s probes), side by side;
// cli; main; bin (the `lisa` entry: the Node version guard, then main).

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, dirname, sep } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const PRODUCTION_BUDGET = 300;
const TEST_BUDGET = 500;

// Modules every module may import (besides itself).
const BASE = ["errors", "log"];
/** module -> modules it may import (value imports). Type-only imports of config/types and config/secret are always allowed. */
const ALLOWED: Record<string, readonly string[]> = {
  errors: ["log"],
  log: ["errors"],
  // Lisa's own HTTP client (LISA-HTTP-01): below every module that speaks HTTP.
  http: BASE,
  config: BASE,
  state: BASE,
  web: [...BASE, "http"],
  render: BASE,
  matrix: [...BASE, "http"],
  tools: [...BASE, "web", "http"],
  llm: [...BASE, "tools", "http"],
  context: [...BASE, "matrix"],
  // Encrypted rooms (LISA-DEVICE-01): the crypto store over node:sqlite and the device lifecycle over the Matrix client.
  e2ee: [...BASE, "http", "matrix", "state"],
  ingest: [...BASE, "matrix", "state"],
  invocation: [...BASE, "state", "matrix", "context", "llm", "render"],
  rooms: [...BASE, "matrix"],
  app: ["*"],
  check: [...BASE, "config", "state", "matrix", "rooms", "llm", "tools", "http", "e2ee"],
  cli: [...BASE, "app", "check", "config", "state"],
  main: [...BASE, "cli"],
  bin: ["cli", "main"],
};
const ALWAYS_ALLOWED_FILES = new Set(["config/types.ts", "config/secret.ts"]);

interface Violation {
  readonly file: string;
  readonly line: number;
  readonly rule: string;
}

function walk(dir: string, out: string[] = []): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** Counts non-blank lines that are not entirely comments. */
export function countedLines(text: string): number {
  let count = 0;
  let inBlock = false;
  for (const raw of text.split("\n")) {
    let line = raw.trim();
    if (inBlock) {
      const end = line.indexOf("*/");
      if (end === -1) continue;
      inBlock = false;
      line = line.slice(end + 2).trim();
    }
    while (line.startsWith("/*")) {
      const end = line.indexOf("*/", 2);
      if (end === -1) {
        inBlock = true;
        line = "";
        break;
      }
      line = line.slice(end + 2).trim();
    }
    if (line === "" || line.startsWith("//")) continue;
    count += 1;
  }
  return count;
}

function moduleOf(srcRelative: string): string {
  const parts = srcRelative.split(sep);
  return parts.length === 1 ? (parts[0] ?? "").replace(/\.ts$/, "") : (parts[0] ?? "");
}

const IMPORT_PATTERN = /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+["']([^"']+)["']|^\s*import\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/;

/** File-level import edges of src/ (type imports included), for the circle check. */
const edges = new Map<string, string[]>();

function checkImports(file: string, text: string, violations: Violation[]): void {
  const srcDir = join(ROOT, "src");
  const fromModule = moduleOf(relative(srcDir, file));
  const allowed = ALLOWED[fromModule];
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    const match = IMPORT_PATTERN.exec(line);
    if (match === null) return;
    const specifier = match[3] ?? match[4] ?? match[5] ?? "";
    const typeOnly = match[2] !== undefined;
    if (!specifier.startsWith(".")) return;
    const target = resolve(dirname(file), specifier);
    edges.set(file, [...(edges.get(file) ?? []), target]);
    const targetRelative = relative(srcDir, target);
    const where = { file: relative(ROOT, file), line: index + 1 };
    if (targetRelative.startsWith("..")) {
      violations.push({ ...where, rule: `src/ may not import outside src/ (${specifier})` });
      return;
    }
    const toModule = moduleOf(targetRelative);
    if (toModule === fromModule) return;
    if (allowed === undefined) {
      violations.push({ ...where, rule: `module '${fromModule}' is not in the architecture matrix` });
      return;
    }
    if (allowed.includes("*") || allowed.includes(toModule)) return;
    if (ALWAYS_ALLOWED_FILES.has(targetRelative.split(sep).join("/")) && (typeOnly || targetRelative.endsWith("secret.ts"))) return;
    violations.push({ ...where, rule: `'${fromModule}' may not import '${toModule}' (${specifier})` });
  });
}

/** Reports every import circle between files of src/ once (a circle hides which file is the lower one). */
export function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const circles: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string): void => {
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      const at = path.indexOf(next);
      if (at !== -1) circles.push([...path.slice(at), next]);
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return circles;
}

function main(): number {
  const violations: Violation[] = [];
  const production = [...walk(join(ROOT, "src")), ...walk(join(ROOT, "scripts")), ...walk(join(ROOT, "bench"))];
  const tests = walk(join(ROOT, "test"));
  for (const file of production) {
    const text = readFileSync(file, "utf8");
    const counted = countedLines(text);
    if (counted > PRODUCTION_BUDGET) {
      violations.push({ file: relative(ROOT, file), line: 1, rule: `production file has ${counted} counted lines (budget ${PRODUCTION_BUDGET})` });
    }
    if (file.startsWith(join(ROOT, "src") + sep)) checkImports(file, text, violations);
  }
  for (const circle of importCircles(edges)) {
    violations.push({ file: relative(ROOT, circle[0] ?? ""), line: 1, rule: `import circle: ${circle.map((f) => relative(join(ROOT, "src"), f)).join(" -> ")}` });
  }
  for (const file of tests) {
    const counted = countedLines(readFileSync(file, "utf8"));
    if (counted > TEST_BUDGET) {
      violations.push({ file: relative(ROOT, file), line: 1, rule: `test file has ${counted} counted lines (budget ${TEST_BUDGET})` });
    }
  }
  for (const v of violations) console.error(`${v.file}:${v.line}: ${v.rule}`);
  if (violations.length > 0) {
    console.error(`architecture check failed: ${violations.length} violation(s)`);
    return 1;
  }
  console.log(`architecture check passed: ${production.length} production and ${tests.length} test files`);
  return 0;
}

if (import.meta.filename === resolve(process.argv[1] ?? "")) process.exitCode = main();
