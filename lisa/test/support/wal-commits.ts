// Counts the transactions committed to a WAL-mode SQLite database since its
// write-ahead log was last reset, by reading the log file itself
// (https://www.sqlite.org/fileformat.html#the_write_ahead_log): a 32-byte
// header (magic, version, page size, checkpoint sequence, two salts, checksum)
// and frames of a 24-byte header plus one page; a frame whose "database size
// after commit" field is not zero ends a transaction. Only the frames that
// carry the header's salts belong to the current log. With
// `synchronous = FULL` every such commit is one fsync of the log.
import { existsSync, readFileSync } from "node:fs";

/** Committed transactions in the current write-ahead log, and which log it is. */
export interface WalCommits {
  readonly commits: number;
  /** Checkpoint sequence and salts: two counts compare only while this stays the same. */
  readonly log: string;
}

/** Reads `<database>-wal`; an absent or empty log has no commits. */
export function walCommits(databasePath: string): WalCommits {
  const path = `${databasePath}-wal`;
  if (!existsSync(path)) return { commits: 0, log: "none" };
  const wal = readFileSync(path);
  if (wal.length < 32) return { commits: 0, log: "empty" };
  const magic = wal.readUInt32BE(0);
  if (magic !== 0x377f0682 && magic !== 0x377f0683) throw new Error("not a SQLite write-ahead log");
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let commits = 0;
  for (let frame = 32; frame + 24 + pageSize <= wal.length; frame += 24 + pageSize) {
    if (wal.readUInt32BE(frame + 8) !== salt1 || wal.readUInt32BE(frame + 12) !== salt2) break;
    if (wal.readUInt32BE(frame + 4) !== 0) commits += 1;
  }
  return { commits, log: `${wal.readUInt32BE(12)}:${salt1}:${salt2}` };
}
