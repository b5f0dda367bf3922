// A vault memory over a real Markdown-files store in a temporary directory
// and the real pinned scanner, with a stepping clock and sequential ids so
// documents are predictable.
import { cpSync } from "node:fs";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { PinnedSecretRedactor } from "../../src/capture/redactor.ts";
import { ScanClient } from "../../src/capture/scan-client.ts";
import { MarkdownFilesStore } from "../../src/memory/lapis/files-store.ts";
import { VaultMemory } from "../../src/memory/lapis/vault.ts";
import type { VaultLimits } from "../../src/memory/lapis/vault-context.ts";
import { tempDir } from "./temp.ts";

export const CANARY_KEY = "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123";
export const VAULT_FIXTURE = join(import.meta.dirname, "..", "fixtures", "memory", "vault", "store");

export type VaultSetup = { root: string; store: MarkdownFilesStore; vault: VaultMemory; scanner: ScanClient; redactor: PinnedSecretRedactor };

/** A vault over `root` (a fresh temp dir, or a copy of the fixture vault when `fromFixture`). */
export function vaultSetup(t: TestContext, options: { root?: string; fromFixture?: boolean; limits?: Partial<VaultLimits>; start?: string } = {}): VaultSetup {
  const root = options.root ?? tempDir(t, "aic-vault-");
  if (options.fromFixture === true) cpSync(VAULT_FIXTURE, root, { recursive: true });
  const scanner = new ScanClient({ deadlineMs: 5_000, resultBufferBytes: 4 * 1024 * 1024 });
  t.after(() => scanner.close());
  const redactor = new PinnedSecretRedactor(scanner);
  let clock = Date.parse(options.start ?? "2026-04-01T00:00:00.000Z");
  let seq = 0;
  const store = new MarkdownFilesStore(root);
  const vault = new VaultMemory({
    store, redactor, limits: options.limits,
    now: () => new Date((clock += 1_000)).toISOString(),
    newId: () => `ep-${String(++seq).padStart(4, "0")}`,
  });
  return { root, store, vault, scanner, redactor };
}

/** The value of an ok MemoryResult, or a thrown assertion naming its code. */
export function value<T>(result: { ok: true; value: T } | { ok: false; error: { code: string } }): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}`);
  return result.value;
}
