import assert from "node:assert/strict";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test, type TestContext } from "node:test";
// @ts-expect-error: the check is a plain .mjs script without type declarations
import { checkArchitecture, countedLines } from "../../../scripts/check-architecture.mjs";
// @ts-expect-error: the rules are a plain .mjs module without type declarations
import { REQUIRED_FILES } from "../../../scripts/architecture-rules.mjs";
import { PACKAGE_ROOT } from "../../support/processes.ts";
import { tempDir } from "../../support/temp.ts";

type Check = (root: string, options?: { updateBaseline?: boolean }) => { violations: string[]; files: number };
const check = checkArchitecture as Check;

function put(root: string, file: string, text: string): void {
  mkdirSync(dirname(join(root, file)), { recursive: true });
  writeFileSync(join(root, file), text);
}

function lines(n: number): string {
  return Array.from({ length: n }, (_, i) => `export const v${i} = ${i};`).join("\n");
}

/** A minimal valid package with a recorded baseline. */
function fixture(t: TestContext): string {
  const root = tempDir(t, "aic-arch-");
  put(root, "package.json", JSON.stringify({ dependencies: { ws: "8.23.1" }, devDependencies: { typescript: "7.0.2" } }));
  put(root, "src/domain/errors.ts", "export const E = 1;\n");
  put(root, "src/persistence/sqlite-store.ts", 'import { DatabaseSync } from "node:sqlite";\nimport { E } from "../domain/errors.ts";\nexport { DatabaseSync, E };\n');
  put(root, "src/transport/ws-server.ts", 'import { WebSocketServer } from "ws";\nexport { WebSocketServer };\n');
  // The named modules issue 13 added to the required list.
  for (const file of ["src/transport/dispatch.ts", "src/transport/client-snapshot.ts", "src/domain/endpoint-registration.ts"]) put(root, file, "");
  put(root, "test/unit/a.test.ts", 'import { E } from "../../src/domain/errors.ts";\nexport const x = E;\n');
  // Every other required named module exists, empty, so each test sees only its own violation.
  for (const file of REQUIRED_FILES as string[]) if (file !== "src/persistence/sqlite-store.ts") put(root, file, "");
  assert.deepEqual(check(root, { updateBaseline: true }).violations, []);
  return root;
}

function rules(root: string): string[] {
  return check(root).violations;
}

test("AIC-ARCH-001 AIC-ARCH-002 the package itself passes its architecture check", () => {
  assert.deepEqual(check(PACKAGE_ROOT).violations, []);
});

test("AIC-ARCH-002a a new 301-counted-line production file fails; 300 passes; tests may have 500", (t) => {
  const root = fixture(t);
  put(root, "src/domain/big.ts", `// comment lines and blank lines are not counted\n\n/* block\n comment */\n${lines(300)}\n`);
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), []);
  put(root, "src/domain/big.ts", lines(301));
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), ["src/domain/big.ts:1:size-budget: 301 counted lines, budget 300"]);
  put(root, "test/unit/big.test.ts", lines(500));
  put(root, "scripts/tool.mjs", lines(301));
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root).sort(), ["scripts/tool.mjs:1:size-budget: 301 counted lines, budget 300", "src/domain/big.ts:1:size-budget: 301 counted lines, budget 300"]);
});

test("AIC-ARCH-002b an existing file may not grow past its baseline budget without a baseline update", (t) => {
  const root = fixture(t);
  put(root, "src/domain/errors.ts", "export const E = 1;\nexport const F = 2;\n");
  assert.deepEqual(rules(root), ["src/domain/errors.ts:1:baseline-grew: 2 counted lines exceed the recorded 1; update scripts/architecture-baseline.json in the same change"]);
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), []);
  put(root, "src/domain/new.ts", "export const N = 1;\n");
  assert.match(rules(root)[0] ?? "", /^src\/domain\/new\.ts:1:baseline-missing: /);
});

test("AIC-ARCH-002c a recorded budget fails when the counted size plus twenty is still below it (stale baseline)", (t) => {
  const root = fixture(t);
  put(root, "src/domain/mid.ts", lines(150));
  put(root, "scripts/architecture-baseline.json", JSON.stringify({ budgets: { ...baseline(root), "src/domain/mid.ts": 200 } }));
  assert.deepEqual(rules(root), ["src/domain/mid.ts:1:baseline-stale: recorded budget 200 is more than 20 above the 150 counted lines; lower it"]);
  put(root, "scripts/architecture-baseline.json", JSON.stringify({ budgets: { ...baseline(root), "src/domain/mid.ts": 170 } }));
  assert.deepEqual(rules(root), [], "budget = counted + 20 is still fine");
  put(root, "scripts/architecture-baseline.json", JSON.stringify({ budgets: { ...baseline(root), "src/domain/mid.ts": 150, "src/domain/gone.ts": 10 } }));
  assert.deepEqual(rules(root), ["scripts/architecture-baseline.json:1:baseline-stale: recorded budget for missing file src/domain/gone.ts"]);
});

/** Records the current baseline of `root` and returns its budgets. */
function baseline(root: string): Record<string, number> {
  check(root, { updateBaseline: true });
  return JSON.parse(readFileSync(join(root, "scripts/architecture-baseline.json"), "utf8")).budgets as Record<string, number>;
}

test("AIC-ARCH-001f an upward import (domain -> persistence) fails with file:line:rule", (t) => {
  const root = fixture(t);
  put(root, "src/domain/errors.ts", 'import { DatabaseSync } from "../persistence/sqlite-store.ts";\nexport const E = DatabaseSync;\n');
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), ["src/domain/errors.ts:1:import-matrix: 'domain' may not import 'persistence' (../persistence/sqlite-store.ts)"]);
});

test("AIC-ARCH-001f the browser-SDK file transport/ws-client.ts may import only frames.ts and domain", (t) => {
  const root = fixture(t);
  put(root, "src/transport/frames.ts", "export const F = 1;\n");
  put(root, "src/transport/ws-client.ts", 'import { F } from "./frames.ts";\nimport { WebSocketServer } from "./ws-server.ts";\nexport { F, WebSocketServer };\n');
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), ["src/transport/ws-client.ts:2:import-matrix: transport/ws-client.ts may import only transport/frames.ts, domain (./ws-server.ts)"]);
});

test("P-CLI-09 a jsr: import fails anywhere (source, scripts, tests)", (t) => {
  const root = fixture(t);
  put(root, "src/domain/errors.ts", 'import { assert } from "jsr:@std/assert";\nexport const E = assert;\n');
  put(root, "test/unit/a.test.ts", 'export const x = await import("jsr:@std/path");\n');
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), [
    "src/domain/errors.ts:1:jsr-import: jsr: imports are forbidden (jsr:@std/assert)",
    "test/unit/a.test.ts:1:jsr-import: jsr: imports are forbidden (jsr:@std/path)",
  ]);
});

test("AIC-ARCH-001 a stray file at the package root fails", (t) => {
  const root = fixture(t);
  put(root, "notes.txt", "scratch\n");
  assert.deepEqual(rules(root), ["notes.txt:1:stray-root-file: the package root holds only .ci, .gitignore, README.md, package.json, package-lock.json, tsconfig.json, deno.json, jsr.json, src, test, scripts, docs, bench, node_modules"]);
});

test("AIC-ARCH-001a AIC-ARCH-001e source outside the named folders, and root files other than facades and composition roots, fail", (t) => {
  const root = fixture(t);
  put(root, "src/util/x.ts", "export const x = 1;\n");
  put(root, "src/helpers.ts", "export const y = 1;\n");
  put(root, "src/service.ts", "export const s = 1;\n");
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), [
    "src/helpers.ts:1:layout: root files are only the facades and composition roots (client, runtime, managed, contracts, index, main, service)",
    "src/util/x.ts:1:layout: production source lives under auth, capture, cli, domain, execution, memory, persistence, sdk, transport",
  ]);
});

test("AIC-ARCH-001c a required named module that is missing fails", (t) => {
  const root = fixture(t);
  put(root, "src/persistence/sqlite-store.ts", "");
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), []);
  rmSync(join(root, "src/persistence/sqlite-store.ts"));
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), ["src/persistence/sqlite-store.ts:1:required-file: this named module must exist (AIC-ARCH-001b/c)"]);
});

test("P-ARC-11 P-ARC-12 P-MEM-05 P-MEM-11 package rules: confined built-ins and packages (the ACP/MCP SDKs only in execution/), consuming apps, nostr, Deno.* outside the shim", (t) => {
  const root = fixture(t);
  put(root, "src/domain/errors.ts", [
    'import { DatabaseSync } from "node:sqlite";',
    'import { WebSocket } from "ws";',
    'import { App } from "@lapismd/lapis-notes/app";',
    'import { relayInit } from "nostr-tools";',
    'import { readFileSync } from "fs";',
    'import { Worker } from "node:worker_threads";',
    "export const E = [DatabaseSync, WebSocket, App, relayInit, readFileSync, Worker, Deno.args];",
    "// Deno.args in a comment is fine",
    'export const s = "Deno.env in a string is fine";',
  ].join("\n"));
  put(root, "test/unit/a.test.ts", 'import { client } from "@agentclientprotocol/sdk";\nexport const x = client;\n');
  check(root, { updateBaseline: true });
  assert.deepEqual(rules(root), [
    "src/domain/errors.ts:1:package-rule: node:sqlite may be imported only under src/persistence/, src/memory/group/",
    "src/domain/errors.ts:2:package-rule: ws may be imported only under src/transport/",
    "src/domain/errors.ts:3:forbidden-package: consuming-app, vault/UI and nostr packages are never imported (@lapismd/lapis-notes/app)",
    "src/domain/errors.ts:4:forbidden-package: consuming-app, vault/UI and nostr packages are never imported (nostr-tools)",
    "src/domain/errors.ts:5:node-prefix: built-in modules are imported with the node: prefix (fs)",
    "src/domain/errors.ts:6:package-rule: node:worker_threads may be imported only under src/capture/",
    "src/domain/errors.ts:7:deno-global: Deno.* is used only behind src/cli/runtime-host.ts",
    "test/unit/a.test.ts:1:package-rule: @agentclientprotocol/sdk may be imported only under src/execution/ and test/support/",
  ]);
});

test("AIC-ARCH-002a counted lines skip blank lines and comments but count code after a block comment", () => {
  assert.equal(countedLines("// a\n\n/* b\n c */ const x = 1;\nconst y = '// not a comment';\n  /** doc */\n"), 2);
});
