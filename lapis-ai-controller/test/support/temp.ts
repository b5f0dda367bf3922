// Per-test temporary directories, removed when the test ends.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { TestContext } from "node:test";

/**
 * A fresh private directory that is removed after the test. node:test runs
 * `after` hooks in the order they were registered, so this removal runs before
 * the cleanups of anything started later in the directory (a serve, an agent),
 * which may still be writing there. A removal that fails then must not stop
 * those cleanups (a failed hook skips the rest, leaving processes behind): it
 * is tried again, once every hook has run, when the test process exits.
 */
export function tempDir(t: TestContext, prefix = "aic-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
  t.after(() => {
    try {
      remove();
    } catch {
      process.once("exit", () => { try { remove(); } catch { /* left for the system's temp cleaner */ } });
    }
  });
  return dir;
}
