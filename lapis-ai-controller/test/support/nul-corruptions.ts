// Raw SQL on a closed store (storeNul), and values holding a NUL after a valid prefix, one per table: a runtime whose node:sqlite cuts a text at its NUL
// (Deno 2.9) would hand startup validation the valid prefix; each must still fail startup closed.
import { DatabaseSync } from "node:sqlite";

/** [where startup must fail, SQL that stores the value]. */
export const NUL_CORRUPTIONS: ReadonlyArray<readonly [string, string]> = [
  ["turns", `UPDATE turns SET state = 'completed' || char(0) || 'x'`],
  ["threads", `UPDATE threads SET config = '{}' || char(0) || 'x'`],
  ["commands", `UPDATE commands SET receipt = '{"commandId":"cmd-1"}' || char(0) || 'x'`],
  ["interactions", `UPDATE interactions SET kind = kind || char(0) || 'x'`],
  ["preparation_markers", `UPDATE preparation_markers SET retention = retention || char(0) || 'x'`],
  ["journal", `UPDATE journal SET payload = '{"text":"ok"}' || char(0) || 'x' WHERE seq = 1`],
  ["journal", `UPDATE journal SET kind = 'text' || char(0) || 'x' WHERE seq = 1`],
  ["journal", `UPDATE journal SET metadata = '{}' || char(0) || 'x' WHERE seq IS NULL`],
  ["journal", `UPDATE journal SET visibility = 'owner' || char(0) || 'x' WHERE seq IS NULL`],
];

/** Runs raw SQL on a closed store file with CHECKs, foreign keys and SQLite's defensive mode off (so a test may also rewrite the catalog). */
export function storeNul(path: string, sql: string): void {
  const db = new DatabaseSync(path, { defensive: false } as ConstructorParameters<typeof DatabaseSync>[1]);
  try {
    db.exec("PRAGMA ignore_check_constraints = ON");
    db.exec("PRAGMA foreign_keys = OFF");
    db.exec(sql);
  } finally {
    db.close();
  }
}
