// Record texts holding a NUL, kept whole on every runtime (P-MEM-25). A
// record's `text` is the one group column that admits any text: ids are
// generated, partitions match validPartition, claims are JSON.stringify's
// output (a NUL escaped as `\u0000`) and the search text is tokens. Deno
// 2.9's node:sqlite stores a bound text whole but hands JS a read TEXT cut
// at its first NUL, so on a connection that cuts, the reads of `text`
// select a value holding a NUL as its BLOB (its UTF-8 bytes) and recordOf
// decodes it (domain/whole-text.ts, shared with serve's store). A connection
// that reads whole texts keeps the plain SQL and pays nothing. The probe runs
// through the port, so a consumer's own connection is judged the same way.
import { cutsAtNul, NUL_PROBE_SQL, wholeSelectList, wholeTextItem } from "../../domain/whole-text.ts";
import type { GroupDatabase } from "./database-port.ts";

export { textOf } from "../../domain/whole-text.ts";

type Reads = { readonly records: string; readonly text: string };

const WHOLE: Reads = { records: "*", text: "text" };
const probed = new WeakMap<GroupDatabase, Reads>();

/** Whether this connection hands JS a row's text cut at its first NUL (Deno 2.9's node:sqlite does). */
export function readsCutAtNul(db: GroupDatabase): boolean {
  return reads(db) !== WHOLE;
}

function reads(db: GroupDatabase): Reads {
  let known = probed.get(db);
  if (known === undefined) {
    const cuts = cutsAtNul(db.get(NUL_PROBE_SQL)?.v);
    known = cuts ? cutReads(db) : WHOLE;
    probed.set(db, known);
  }
  return known;
}

function cutReads(db: GroupDatabase): Reads {
  const names = db.all("SELECT name FROM pragma_table_info('group_records')").map((c) => String(c.name));
  return { records: wholeSelectList(names, ["text"]), text: wholeTextItem("text") };
}

/** The select list of a whole `group_records` row: `*`, or each column by name with `text` kept whole. */
export function recordColumns(db: GroupDatabase): string {
  return reads(db).records;
}

/** The `text` column as a select item kept whole (plain `text` where texts are read whole). */
export function recordText(db: GroupDatabase): string {
  return reads(db).text;
}
