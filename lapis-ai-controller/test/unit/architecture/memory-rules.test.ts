// The import rules of src/memory/ (P-MEM-05, P-MEM-11, AIC-ARCH-001f): the
// memory library takes only domain types and node: built-ins; the vault and
// group profiles are closed to each other; SQLite is the group profile's.
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test, type TestContext } from "node:test";
// @ts-expect-error: the check is a plain .mjs script without type declarations
import { checkArchitecture } from "../../../scripts/check-architecture.mjs";
// @ts-expect-error: the rules are a plain .mjs module without type declarations
import { REQUIRED_FILES } from "../../../scripts/architecture-rules.mjs";
import { tempDir } from "../../support/temp.ts";

type Check = (root: string, options?: { updateBaseline?: boolean }) => { violations: string[]; files: number };
const check = checkArchitecture as Check;

function put(root: string, file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

function fixture(t: TestContext): string {
  const root = tempDir(t, "aic-arch-mem-");
  put(root, "package.json", JSON.stringify({ dependencies: { ws: "8.23.1" } }));
  for (const file of REQUIRED_FILES as string[]) put(root, file, "");
  for (const folder of ["domain", "capture", "transport", "execution", "cli", "persistence"]) put(root, `src/${folder}/x.ts`, "export const x = 1;\n");
  put(root, "src/service.ts", "export const s = 1;\n");
  put(root, "src/memory/ranking.ts", "export const r = 1;\n");
  put(root, "src/memory/lapis/episode.ts", "export const e = 1;\n");
  put(root, "src/memory/group/search.ts", "export const g = 1;\n");
  return root;
}

/** The violations after adding `file` with `text`, with a fresh baseline. */
function violationsWith(root: string, file: string, text: string): string[] {
  put(root, file, text);
  check(root, { updateBaseline: true });
  return check(root).violations;
}

test("P-MEM-05 AIC-ARCH-001f memory/ may import domain, its own files and node: built-ins", (t) => {
  const root = fixture(t);
  const text = ['import { x } from "../../domain/x.ts";', 'import { r } from "../ranking.ts";', 'import { e } from "./episode.ts";',
    'import { readFileSync } from "node:fs";', "export { x, r, e, readFileSync };", ""].join("\n");
  assert.deepEqual(violationsWith(root, "src/memory/lapis/ingest.ts", text), []);
  assert.deepEqual(violationsWith(root, "src/memory/index.ts", 'export * from "./lapis/episode.ts";\nexport * from "./group/search.ts";\n'), []);
});

test("P-MEM-05 AIC-ARCH-001f memory/ may not import app, service, transport, cli, execution, persistence or capture code", (t) => {
  const root = fixture(t);
  for (const target of ["service.ts", "transport/x.ts", "cli/x.ts", "execution/x.ts", "persistence/x.ts", "capture/x.ts"]) {
    const found = violationsWith(root, "src/memory/lapis/bad.ts", `import { x } from "../../${target}";\nexport { x };\n`);
    assert.equal(found.length, 1, target);
    assert.match(found[0]!, /^src\/memory\/lapis\/bad\.ts:1:import-matrix: 'memory' may not import /);
  }
  assert.match(violationsWith(root, "src/memory/lapis/bad.ts", 'import x from "@lapismd/lapis-notes";\nexport { x };\n')[0]!, /forbidden-package/);
  assert.match(violationsWith(root, "src/memory/group/bad.ts", 'import x from "nostr-tools";\nexport { x };\n')[0]!, /forbidden-package/);
});

test("P-MEM-05 AIC-ARCH-001d the vault and group profiles are closed to each other; shared files import neither", (t) => {
  const root = fixture(t);
  assert.deepEqual(violationsWith(root, "src/memory/lapis/bad.ts", 'import { g } from "../group/search.ts";\nexport { g };\n'),
    ["src/memory/lapis/bad.ts:1:import-matrix: src/memory/group/ is closed to src/memory/lapis/ (../group/search.ts)"]);
  put(root, "src/memory/lapis/bad.ts", "export const ok = 1;\n");
  assert.deepEqual(violationsWith(root, "src/memory/group/bad.ts", 'import { e } from "../lapis/episode.ts";\nexport { e };\n'),
    ["src/memory/group/bad.ts:1:import-matrix: src/memory/lapis/ is closed to src/memory/group/ (../lapis/episode.ts)"]);
  put(root, "src/memory/group/bad.ts", "export const ok = 1;\n");
  assert.deepEqual(violationsWith(root, "src/memory/budget.ts", 'import { e } from "./lapis/episode.ts";\nexport { e };\n'),
    ["src/memory/budget.ts:1:import-matrix: src/memory/lapis/ is closed to src/memory/budget.ts (./lapis/episode.ts)"]);
});

test("P-MEM-05 node:sqlite is confined to persistence/ and the group profile; the vault profile may not use it", (t) => {
  const root = fixture(t);
  const sqlite = 'import { DatabaseSync } from "node:sqlite";\nexport { DatabaseSync };\n';
  assert.deepEqual(violationsWith(root, "src/memory/group/fts.ts", sqlite), []);
  assert.deepEqual(violationsWith(root, "src/memory/lapis/db.ts", sqlite),
    ["src/memory/lapis/db.ts:1:package-rule: node:sqlite may be imported only under src/persistence/, src/memory/group/"]);
  put(root, "src/memory/lapis/db.ts", "export const ok = 1;\n");
  assert.deepEqual(violationsWith(root, "src/memory/shared.ts", sqlite),
    ["src/memory/shared.ts:1:package-rule: node:sqlite may be imported only under src/persistence/, src/memory/group/"]);
});
