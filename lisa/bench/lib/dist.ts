// A throw-away build of dist/ (tsconfig.build.json) in a temporary folder,
// so the benchmarks can also start Lisa the way the packaged `lisa` binary
// runs her (plain JavaScript, no type stripping) without touching the tree.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../../test/support/lisa-harness.ts";
import { NODE } from "./world.ts";

/** A temporary dist/ build; `remove()` deletes it. */
export interface DistBuild {
  /** Absolute path of the built dist/main.js. */
  readonly entry: string;
  remove(): void;
}

/** Builds dist/ into a temporary folder beside a node_modules link; throws when tsc fails. */
export function buildDist(): DistBuild {
  const root = mkdtempSync(join(tmpdir(), "lisa-bench-dist-"));
  const remove = (): void => rmSync(root, { recursive: true, force: true });
  const tsc = join(REPO, "node_modules/typescript/bin/tsc");
  const result = spawnSync(NODE, [tsc, "-p", join(REPO, "tsconfig.build.json"), "--outDir", join(root, "dist")], {
    cwd: REPO, encoding: "utf8", timeout: 120_000,
  });
  if (result.status !== 0) {
    remove();
    throw new Error(`bench: dist build failed: ${result.stdout}${result.stderr}`);
  }
  writeFileSync(join(root, "package.json"), JSON.stringify({ type: "module" }));
  symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"));
  return { entry: join(root, "dist/main.js"), remove };
}
