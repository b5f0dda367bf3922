import { resolve } from "node:path";
import { readConfigFile } from "../config/load.ts";
import { openStateStore } from "../state/store.ts";
import { assessHealth } from "../state/health.ts";
import { EXIT } from "./exit-codes.ts";
import type { Output } from "./output.ts";

/** `lisa status`: reads the ledger read-only and reports health; exit 0 healthy, 1 degraded. */
export function statusCommand(configPath: string, json: boolean, output: Output): number {
  const parsed = readConfigFile(configPath);
  if (!parsed.ok) {
    for (const problem of parsed.error.problems) output.err(problem);
    return EXIT.config;
  }
  const { file, baseDir } = parsed.value;
  const opened = openStateStore(resolve(baseDir, file.runtime.database_path), { mode: "readonly" });
  if (!opened.ok) {
    output.err(`state database: FAILED [${opened.error.code}] ${opened.error.message}`);
    return opened.error.code === "state_schema_newer" || opened.error.code === "state_corrupt" ? EXIT.config : EXIT.failure;
  }
  const store = opened.value;
  try {
    const summary = store.status();
    const health = assessHealth(summary, {
      syncMaxAgeMs: file.runtime.health_sync_max_age_seconds * 1000,
      readyToSendMaxAgeMs: file.runtime.health_ready_to_send_max_age_seconds * 1000,
    });
    if (json) output.out(JSON.stringify({ healthy: health.healthy, reasons: health.reasons, ...summary }, null, 2));
    else {
      output.out(`health: ${health.healthy ? "healthy" : `degraded (${health.reasons.join(", ")})`}`);
      for (const line of describeSummary(summary)) output.out(line);
    }
    return health.healthy ? EXIT.ok : EXIT.failure;
  } finally {
    store.close();
  }
}

function describeSummary(summary: ReturnType<import("../state/store.ts").StateStore["status"]>): string[] {
  return Object.entries(summary).map(([key, value]) => `${key}: ${typeof value === "object" && value !== null ? JSON.stringify(value) : String(value)}`);
}
