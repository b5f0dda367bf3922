import { runPreflight } from "../check/preflight.ts";
import { openCheckSession } from "../check/preflight-matrix.ts";
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
  // One Matrix login for the probe and the room report, on the check's own device (LISA-CHECK-01).
  const session = openCheckSession(loaded.value);
  let failed = false;
  try {
    const results = await runPreflight(loaded.value, { matrixSession: session });
    for (const result of results) {
      if (result.ok) output.out(`${result.name}: ok${result.detail === undefined ? "" : ` (${result.detail})`}`);
      else {
        failed = true;
        output.err(`${result.name}: FAILED [${result.code}] ${result.fix}`);
      }
    }
    // Rooms are looked at only with a working Matrix login (LISA-ROOMS-01).
    if (results.some((result) => result.name === "matrix" && result.ok) && !(await reportRooms(loaded.value, output, session))) failed = true;
  } finally {
    const logout = await session.end();
    if (logout !== null && !logout.ok) {
      output.err(`matrix: note: the check could not log out its device ${session.deviceId} (${logout.error.code}); ` +
        "it is reused by the next check, or remove it from Lisa's sessions in a Matrix client");
    }
  }
  return failed ? EXIT.config : EXIT.ok;
}
