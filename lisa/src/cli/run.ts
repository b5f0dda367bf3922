import { createConfigReloads } from "../app/reload.ts";
import { runService } from "../app/service.ts";
import { loadConfig } from "../config/load.ts";
import { createLogger } from "../log/logger.ts";
import { openStateStore } from "../state/store.ts";
import { EXIT } from "./exit-codes.ts";
import type { Output } from "./output.ts";

// Ledger failures that mean "do not guess": an unknown schema or corrupt rows.
const CONFIG_LIKE_STATE_CODES = new Set(["state_schema_newer", "state_corrupt"]);

/**
 * `lisa run`: validates configuration, opens the ledger and runs until
 * SIGTERM/SIGINT or a fatal error. SIGHUP re-reads the configuration file: a
 * valid one goes to the service (which applies what can change live), an
 * invalid one is reported and the running configuration stays.
 */
export async function runCommand(configPath: string, pretty: boolean, output: Output): Promise<number> {
  const loaded = loadConfig(configPath);
  if (!loaded.ok) {
    output.err("lisa: configuration is invalid:");
    for (const problem of loaded.error.problems) output.err(`  ${problem}`);
    return EXIT.config;
  }
  const config = loaded.value;
  const log = createLogger({ level: config.runtime.log_level, secrets: config.secrets.map((s) => s.reveal()), pretty });
  const opened = openStateStore(config.runtime.database_path, { mode: "run" });
  if (!opened.ok) {
    log.error("state_open_failed", { code: opened.error.code });
    output.err(`lisa: ${opened.error.message}`);
    return CONFIG_LIKE_STATE_CODES.has(opened.error.code) ? EXIT.config : EXIT.failure;
  }
  const store = opened.value;
  const shutdown = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shutdown.signal.aborted) return;
    log.info("shutdown_requested", { signal });
    shutdown.abort(new Error(signal));
  };
  const reloads = createConfigReloads();
  const onReload = (): void => {
    const next = loadConfig(configPath);
    if (!next.ok) {
      log.warn("config_reload_failed", { code: next.error.code, problems: next.error.problems.length });
      output.err("lisa: the reloaded configuration is invalid (the running one stays):");
      for (const problem of next.error.problems) output.err(`  ${problem}`);
      return;
    }
    reloads.publish(next.value);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.on("SIGHUP", onReload);
  try {
    return await runService({ config, store, log, shutdown: shutdown.signal, reloads });
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    process.off("SIGHUP", onReload);
    store.close();
  }
}
