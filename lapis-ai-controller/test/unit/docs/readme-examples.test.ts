// The README's SDK examples compile against the SDK of this checkout
// (P-OPS-09): every block after `<!-- example: NAME -->` is written out as
// NAME and type-checked by the pinned `tsc` (strict, checkJs), with the
// package's facades (`lapis-ai-controller/client`, `/managed`, …) mapped to
// their sources. `test/acceptance/release-gates.test.ts` runs the first one
// against an installed serve.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { tempDir } from "../../support/temp.ts";

const PACKAGE = join(import.meta.dirname, "..", "..", "..");
const TSC = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
const NODE = join(PACKAGE, "node_modules", "node", "bin", "node");
const FACADES = { client: "src/client.ts", runtime: "src/runtime.ts", managed: "src/managed.ts", contracts: "src/contracts.ts", memory: "src/memory/index.ts" };

/** Every `<!-- example: NAME -->` block of the README: name -> source. */
export function readmeExamples(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/<!-- example: ([\w.-]+) -->\n```(?:js|ts)\n([\s\S]*?)```/g)) out.set(m[1] as string, m[2] as string);
  return out;
}

test("P-OPS-09 the README's SDK examples type-check against the current SDK (strict, checkJs)", { timeout: 180_000 }, (t) => {
  const examples = readmeExamples(readFileSync(join(PACKAGE, "README.md"), "utf8"));
  assert.ok(examples.has("first-turn.mjs") && examples.size >= 3, `examples: ${[...examples.keys()].join(", ")}`);
  const dir = tempDir(t, "aic-readme-");
  for (const [name, source] of examples) writeFileSync(join(dir, name), source);
  const paths = Object.fromEntries(Object.entries(FACADES).map(([facade, file]) => [`lapis-ai-controller/${facade}`, [join(PACKAGE, file)]]));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "es2024", lib: ["es2024", "dom"], module: "nodenext", moduleResolution: "nodenext", strict: true, noUncheckedIndexedAccess: true,
      allowJs: true, checkJs: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true,
      types: ["node"], typeRoots: [join(PACKAGE, "node_modules", "@types")], paths,
    },
    files: [...examples.keys()],
  }));
  const r = spawnSync(NODE, [TSC, "-p", join(dir, "tsconfig.json")], { cwd: dir, encoding: "utf8", timeout: 150_000 });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
});

test("P-OPS-09 the type check fails on an example that misuses the SDK", { timeout: 180_000 }, (t) => {
  // The same check on a wrong call (turns.submit without a thread id) must fail, or the test above proves nothing.
  const dir = tempDir(t, "aic-readme-bad-");
  writeFileSync(join(dir, "bad.mjs"), 'import { ControllerClient } from "lapis-ai-controller/client";\nconst c = await ControllerClient.connect({ url: "ws://127.0.0.1:1", credential: { type: "token", token: "x" } });\nawait c.turns.submit({ text: "no thread" });\n');
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "es2024", lib: ["es2024", "dom"], module: "nodenext", moduleResolution: "nodenext", strict: true,
      allowJs: true, checkJs: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true,
      types: ["node"], typeRoots: [join(PACKAGE, "node_modules", "@types")], paths: { "lapis-ai-controller/client": [join(PACKAGE, FACADES.client)] },
    },
    files: ["bad.mjs"],
  }));
  const r = spawnSync(NODE, [TSC, "-p", join(dir, "tsconfig.json")], { cwd: dir, encoding: "utf8", timeout: 150_000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stdout, /bad\.mjs\(3,/);
});
