// `lisa e2ee export-recovery | restore | reset-identity`: her cross-signing
// identity, while Lisa is stopped. The recovery key comes from
// `e2ee.recovery_key` (an env: reference) or stdin, never from the command
// line; `export-recovery` prints it on stdout and nothing else there.

import { loadConfig } from "../config/load.ts";
import { Secret } from "../config/secret.ts";
import { identityCommand } from "../app/e2ee-identity.ts";
import { silentLogger } from "../log/logger.ts";
import type { E2eeAction } from "./args.ts";
import { EXIT } from "./exit-codes.ts";
import type { Output } from "./output.ts";

/** Largest recovery key read from stdin, and how long the read may take. */
const STDIN_LIMIT = { bytes: 4_096, ms: 300_000 } as const;

/** Reads one line (up to `STDIN_LIMIT`) from `input`; null when it ends empty, is too long or times out. */
export function readSecretLine(input: NodeJS.ReadableStream, limit: { readonly bytes: number; readonly ms: number } = STDIN_LIMIT): Promise<string | null> {
  return new Promise((resolve) => {
    let text = "";
    const finish = (value: string | null): void => {
      clearTimeout(timer);
      input.removeListener("data", onData);
      input.removeListener("end", onEnd);
      input.removeListener("error", onEnd);
      input.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer | string): void => {
      text += chunk.toString();
      if (Buffer.byteLength(text) > limit.bytes) finish(null);
      else if (text.includes("\n")) finish(text.slice(0, text.indexOf("\n")).trim() || null);
    };
    const onEnd = (): void => finish(text.trim() === "" ? null : text.trim());
    const timer = setTimeout(() => finish(null), limit.ms);
    input.on("data", onData);
    input.once("end", onEnd);
    input.once("error", onEnd);
    input.resume();
  });
}

const FIXES: Readonly<Record<string, string>> = {
  state_locked: "Lisa is running: stop her first (her store belongs to one process at a time)",
  e2ee_disabled: "set [e2ee] enabled = true and store_passphrase in the configuration",
  e2ee_identity_missing: "her account has no identity yet: start Lisa once with e2ee on; she creates it",
  e2ee_identity_not_in_store: "her store lacks the account's identity: run `lisa e2ee restore` with her recovery key (or her account's Element recovery key)",
  e2ee_identity_mismatch: "her store holds another identity than the account's: run `lisa e2ee restore` with the account's recovery key",
  e2ee_recovery_key_invalid: "the recovery key is not one `lisa e2ee export-recovery` printed: check it for typos or truncation",
  e2ee_recovery_key_mismatch: "the recovery key belongs to another identity than the account's on the homeserver, or is not her account's secret storage key",
  matrix_uia_refused: "the homeserver refused her password for the key upload: check matrix.password",
  crypto_store_passphrase_wrong: "e2ee.store_passphrase does not open her crypto store: set the passphrase it was made with",
};

/** Runs one `lisa e2ee` action; exit 0 done, 1 failed, 78 configuration. */
export async function e2eeCommand(action: E2eeAction, configPath: string, output: Output, stdin: NodeJS.ReadableStream = process.stdin): Promise<number> {
  const loaded = loadConfig(configPath);
  if (!loaded.ok) {
    output.err("configuration: FAILED");
    for (const problem of loaded.error.problems) output.err(`  ${problem}`);
    return EXIT.config;
  }
  const config = loaded.value;
  let command: Parameters<typeof identityCommand>[1];
  if (action === "restore") {
    let key = config.e2ee.recovery_key;
    if (key === null) {
      output.err("recovery key: reading one line from stdin (e2ee.recovery_key is not set)");
      const line = await readSecretLine(stdin);
      if (line === null) {
        output.err("e2ee restore: FAILED [e2ee_recovery_key_invalid] no recovery key on stdin (one line, at most 4 KiB)");
        return EXIT.failure;
      }
      key = new Secret("e2ee.recovery_key", line);
    }
    command = { kind: "restore", recoveryKey: key };
  } else command = { kind: action === "export-recovery" ? "export" : "reset" };
  const result = await identityCommand(config, command, silentLogger);
  if (!result.ok) {
    const fix = FIXES[result.error.code] ?? "the code says what failed; see docs/operations.md";
    output.err(`e2ee ${action}: FAILED [${result.error.code}] ${fix}`);
    return result.error.code === "e2ee_disabled" ? EXIT.config : EXIT.failure;
  }
  const { master, recoveryKey } = result.value;
  if (recoveryKey !== undefined) {
    output.out(recoveryKey);
    output.err(`e2ee export-recovery: ok; the line on stdout is her recovery key for identity ${master}: keep it secret, in a password manager`);
  } else {
    const done = action === "restore" ? "her identity is restored and her device signed" : "a new identity replaced the old one; members see her as changed";
    output.err(`e2ee ${action}: ok; ${done} (master key ${master})`);
  }
  return EXIT.ok;
}
