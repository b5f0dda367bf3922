import { resolve } from "node:path";
import type { CheckSession } from "../check/preflight-matrix.ts";
import { checkRooms } from "../check/preflight-rooms.ts";
import type { AppConfig } from "../config/types.ts";
import { openStateStore } from "../state/store.ts";
import type { Output } from "./output.ts";

// `lisa check`, per allowed room (LISA-ROOMS-01). The alias bindings come from a
// read-only open of the state database (absent or unreadable: none known),
// which never takes the lock, so the check runs beside a running Lisa.

function knownAliases(config: AppConfig): Map<string, string> {
  const known = new Map<string, string>();
  if (config.matrix.allowed_room_aliases.length === 0) return known;
  const opened = openStateStore(resolve(config.runtime.database_path), { mode: "readonly" });
  if (!opened.ok) return known;
  try {
    for (const alias of config.matrix.allowed_room_aliases) {
      const room = opened.value.aliasBinding(alias);
      if (room !== null) known.set(alias, room);
    }
  } finally {
    opened.value.close();
  }
  return known;
}

/** Prints one line per allowed room and alias; true when every room is usable. */
export async function reportRooms(config: AppConfig, output: Output, session: CheckSession): Promise<boolean> {
  const known = knownAliases(config);
  const lines = await checkRooms(config, { knownRoom: (alias) => known.get(alias) ?? null, session });
  for (const line of lines) {
    if (line.ok) output.out(line.text);
    else output.err(line.text);
  }
  return lines.every((line) => line.ok);
}
