// The import rules of the native embedding provider (P-MEM-05, AIC-ARCH-001f):
// onnxruntime-node, an optional peer dependency, is loaded only under
// src/memory/native/, which is closed to the vault and group profiles.
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

function fixture(t: TestContext, manifest: object): string {
  const root = tempDir(t, "aic-arch-native-");
  put(root, "package.json", JSON.stringify(manifest));
  for (const file of REQUIRED_FILES as string[]) put(root, file, "");
  put(root, "src/memory/ports.ts", "export const p = 1;\n");
  put(root, "src/memory/lapis/episode.ts", "export const e = 1;\n");
  put(root, "src/memory/native/provider.ts", 'import { p } from "../ports.ts";\nexport const n = p;\n');
  return root;
}

function violationsWith(root: string, file: string, text: string): string[] {
  put(root, file, text);
  check(root, { updateBaseline: true });
  return check(root).violations;
}

const PEER = { peerDependencies: { "onnxruntime-node": "1.31.1" }, peerDependenciesMeta: { "onnxruntime-node": { optional: true } } };

test("P-MEM-05 AIC-ARCH-001f src/memory/native/ may load onnxruntime-node declared as an optional peer dependency", (t) => {
  const root = fixture(t, PEER);
  assert.deepEqual(violationsWith(root, "src/memory/native/runtime.ts", 'export const load = () => import("onnxruntime-node");\n'), []);
});

test("P-MEM-05 AIC-ARCH-001f onnxruntime-node anywhere else in src/ is a package-rule violation", (t) => {
  const root = fixture(t, PEER);
  for (const file of ["src/memory/ranking.ts", "src/memory/lapis/vectors.ts", "src/domain/x.ts"]) {
    const found = violationsWith(root, file, 'import ort from "onnxruntime-node";\nexport { ort };\n');
    assert.equal(found.length, 1, file);
    assert.match(found[0]!, /package-rule: onnxruntime-node may be imported only under src\/memory\/native\//);
    put(root, file, "export const clean = 1;\n");
  }
});

test("P-MEM-05 AIC-ARCH-001f an undeclared runtime stays an undeclared-package violation", (t) => {
  const root = fixture(t, {});
  const found = violationsWith(root, "src/memory/native/runtime.ts", 'export const load = () => import("onnxruntime-node");\n');
  assert.equal(found.length, 1);
  assert.match(found[0]!, /undeclared-package: onnxruntime-node is not a production dependency/);
});

test("P-MEM-05 AIC-ARCH-001f the native provider and the memory profiles are closed to each other", (t) => {
  const root = fixture(t, PEER);
  assert.match(violationsWith(root, "src/memory/native/bad.ts", 'import { e } from "../lapis/episode.ts";\nexport { e };\n')[0]!, /src\/memory\/lapis\/ is closed to src\/memory\/native\//);
  put(root, "src/memory/native/bad.ts", "export const b = 1;\n");
  assert.match(violationsWith(root, "src/memory/lapis/bad.ts", 'import { n } from "../native/provider.ts";\nexport { n };\n')[0]!, /src\/memory\/native\/ is closed to src\/memory\/lapis\//);
  put(root, "src/memory/lapis/bad.ts", "export const b = 1;\n");
  assert.deepEqual(violationsWith(root, "src/memory/index.ts", 'export * from "./native/provider.ts";\n'), [], "the memory facade may export it");
});
