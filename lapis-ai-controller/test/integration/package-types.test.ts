// The npm tarball carries .d.ts files for the four facades (client, runtime,
// managed, contracts), referenced by package.json `exports` (issue 25 point 6);
// a TypeScript consumer type-checks against them and a wrong use fails.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PACKAGE_ROOT } from "../support/processes.ts";
import { tempDir } from "../support/temp.ts";

const FACADES = ["client", "runtime", "managed", "contracts"];
const TSC = join(PACKAGE_ROOT, "node_modules", "typescript", "bin", "tsc");

function typecheck(consumer: string, file: string) {
  return spawnSync(process.execPath, [TSC, "--ignoreConfig", join(consumer, file), "--noEmit", "--strict", "--target", "es2024", "--module", "nodenext",
    "--moduleResolution", "nodenext", "--types", "node", "--typeRoots", join(PACKAGE_ROOT, "node_modules", "@types")], { cwd: consumer, encoding: "utf8", timeout: 120_000 });
}

test("P-OPS-03 the packed tarball holds .d.ts for the four facades, named by exports, and a consumer type-checks against them", { timeout: 300_000 }, (t) => {
  const work = tempDir(t, "aic-types-");
  const packed = spawnSync(process.execPath, ["--no-warnings", join(PACKAGE_ROOT, "scripts", "stage-snapshot.mjs"), "--pack", work], { cwd: PACKAGE_ROOT, encoding: "utf8", timeout: 240_000 });
  assert.equal(packed.status, 0, packed.stderr);
  const { tarball } = JSON.parse(packed.stdout) as { tarball: string };
  const listed = spawnSync("tar", ["-tzf", tarball], { encoding: "utf8", timeout: 30_000 }).stdout.split("\n").filter(Boolean);
  for (const f of FACADES) assert.ok(listed.includes(`package/types/${f}.d.ts`), `types/${f}.d.ts`);
  assert.ok(listed.includes("package/types/domain/contract/methods.d.ts"));
  assert.ok(listed.every((f) => !f.endsWith(".ts") || f.endsWith(".d.ts")), "no TypeScript sources");
  const consumer = join(work, "consumer");
  const installed = join(consumer, "node_modules", "lapis-ai-controller");
  mkdirSync(installed, { recursive: true });
  assert.equal(spawnSync("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], { timeout: 30_000 }).status, 0);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string }> };
  for (const f of FACADES) assert.deepEqual(manifest.exports[`./${f}`], { types: `./types/${f}.d.ts`, default: `./src/${f}.js` });
  const dts = readFileSync(join(installed, "types", "client.d.ts"), "utf8");
  assert.doesNotMatch(dts, /from "\.[^"]*\.ts"/, "declaration specifiers name .js files");
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "typed-consumer", private: true, type: "module" }));
  writeFileSync(join(consumer, "good.ts"), `
import { ClientError, ControllerClient, CLIENT_ERROR_CODES, type ClientErrorCode, type Turn, type ThreadEvent } from "lapis-ai-controller/client";
import { ControllerRuntime } from "lapis-ai-controller/runtime";
import { startManagedController } from "lapis-ai-controller/managed";
import { assertTranscript, transcriptHash } from "lapis-ai-controller/contracts";
export async function run(client: ControllerClient): Promise<string> {
  const { threadId } = await client.threads.create({ workspace: "main", provider: "codex", binding: { retention: "metadata-only" } });
  const { turnId } = await client.turns.submit(threadId, { text: "hi" });
  const turn: Turn = await client.turns.wait(turnId, { timeoutMs: 1000 });
  const state: "completed" | "failed" | "cancelled" | "interrupted" | "submission_unknown" | "queued" | "preparing" | "dispatched" | "running" | "waiting" | "cancelling" = turn.state;
  for await (const d of client.events(threadId)) { const e: ThreadEvent = d.event; if (e.kind === "turn_outcome") break; }
  const code: ClientErrorCode = CLIENT_ERROR_CODES[0];
  void [ClientError, ControllerRuntime, startManagedController, assertTranscript, transcriptHash, code];
  return state;
}
`);
  const good = typecheck(consumer, "good.ts");
  assert.equal(good.status, 0, `${good.stdout}${good.stderr}`);
  writeFileSync(join(consumer, "bad.ts"), `
import type { ControllerClient } from "lapis-ai-controller/client";
export async function run(client: ControllerClient): Promise<void> {
  const n: number = (await client.turns.wait("t")).state;
  await client.threads.create({ workspace: "main", provider: "codex", binding: { retention: "sometimes" } });
  void n;
}
`);
  const bad = typecheck(consumer, "bad.ts");
  assert.notEqual(bad.status, 0, "the declarations are typed, not any");
  assert.match(bad.stdout, /bad\.ts\(4,/);
  assert.match(bad.stdout, /bad\.ts\(5,/);
});
