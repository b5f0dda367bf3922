import { runPreflight } from "../check/preflight.ts";
import { loadConfig } from "../config/load.ts";
import { reportRooms } from "./check-rooms.ts";
import { EXIT } from "./exit-codes.ts";
import type { Output } from "./output.ts";

/** `lisa check`: offline validation, then (unless `offline`) one probe per service; exit 0 or 78. */
export async function checkCommand(configPath: string, offline: boolean, output: Output): Promise<number> {
  const loaded = loadConfig(configPath);
  if (!loaded.ok) {
    output.err(`configuration: FAILED`);
    for (const problem of loaded.error.problems) output.err(`  ${problem}`);
    return EXIT.config;
  }
  output.out("configuration: ok");
  if (offline) return EXIT.ok;
  const results = await runPreflight(loaded.value);
  let failed = false;
  for (const result of results) {
    if (result.ok) output.out(`${result.name}: ok${result.detail === undefined ? "" : ` (${result.detail})`}`);
    else {
      failed = true;
      output.err(`${result.name}: FAILED [${result.code}] ${result.fix}`);
    }
  }
  // Rooms are looked at only with a working Matrix login (issue 18).
  if (results.some((result) => result.name === "matrix" && result.ok) && !(await reportRooms(loaded.value, output))) failed = true;
  return failed ? EXIT.config : EXIT.ok;
}
