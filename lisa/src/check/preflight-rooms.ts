// `lisa check`, per allowed room (LISA-ROOMS-01): after the Matrix probe passed,
// reuse its login (the check's own device) and report, one line per room, whether she is
// joined (or only invited), whether the room is encrypted, whether her power
// level allows sending, the room version, and whether an alias resolves (and
// still to the room the ledger knows). Reads only: nothing is sent anywhere.

import type { AppConfig } from "../config/types.ts";
import { scrubSecrets } from "../log/logger.ts";
import { MATRIX_PROBE_TIMEOUT_MS, openCheckSession, type CheckSession } from "./preflight-matrix.ts";
import { printable, withDeadline } from "./preflight-result.ts";
import { resolveAliases, type AliasOutcome } from "../rooms/room-aliases.ts";
import { conditionsOf, diagnoseRooms, ROOM_CODES, type RoomCode, type RoomDiagnosis } from "../rooms/room-diagnosis.ts";
import { roomFix, type FixFacts, type RoomSource } from "./room-fixes.ts";

/** One line of the room report. */
export interface RoomCheckLine {
  /** The configured entry: a room id or an alias. */
  readonly room: string;
  readonly ok: boolean;
  /** Failure codes (empty when ok). */
  readonly codes: readonly RoomCode[];
  /** The printable line, starting with `room `. */
  readonly text: string;
}

/** Options of `checkRooms`. */
export interface RoomCheckOptions {
  readonly signal?: AbortSignal;
  /** The room the ledger knows for an alias (from a read-only open of the state database). */
  readonly knownRoom?: (alias: string) => string | null;
  /** Deadline of the whole room check (default: the Matrix probe's). */
  readonly timeoutMs?: number;
  /** The check's Matrix session, already used by the Matrix probe (default: open and end one here). */
  readonly session?: CheckSession;
}

function describe(d: RoomDiagnosis): string {
  const parts = [d.joined ? "joined" : d.invited ? "invited, not joined" : "not joined"];
  if (d.encrypted !== null) parts.push(d.encrypted ? "encrypted" : "not encrypted");
  if (d.power !== null) {
    const level = d.power.level === null ? "room creator" : `power ${d.power.level}, messages need ${d.power.required}`;
    parts.push(d.power.canSend ? `can send messages and typing notifications (${level})` : `cannot send messages (${level})`);
  }
  if (d.roomVersion !== null) parts.push(`room version ${printable(d.roomVersion, 20)}`);
  return parts.join("; ");
}

function line(room: string, label: string, problems: readonly { code: RoomCode; fix: string }[], facts: string): RoomCheckLine {
  if (problems.length === 0) return { room, ok: true, codes: [], text: `room ${label}: ok (${facts})` };
  const text = `room ${label}: FAILED ${problems.map((p) => `[${p.code}] ${p.fix}`).join("; ")}${facts === "" ? "" : ` (${facts})`}`;
  return { room, ok: false, codes: problems.map((p) => p.code), text };
}

const BY_ID: RoomSource = { key: "matrix.allowed_room_ids" };

function roomLine(config: AppConfig, room: string, label: string, d: RoomDiagnosis | undefined, source: RoomSource): RoomCheckLine {
  const base: FixFacts = { homeserverUrl: config.matrix.homeserver_url, userId: config.matrix.user_id, room: d?.roomId ?? room, source };
  if (d === undefined) return line(room, label, [{ code: ROOM_CODES.lookupFailed, fix: roomFix(ROOM_CODES.lookupFailed, base) }], "");
  // With encrypted rooms on (LISA-E2EE-09) an encrypted room is served: a fact of the line, not a problem.
  const served = (code: RoomCode): boolean => !(config.e2ee.enabled && code === ROOM_CODES.encrypted);
  const problems = conditionsOf(d).filter(served).map((code) => ({ code, fix: roomFix(code, { ...base, power: d.power }) }));
  if (d.failure !== null) {
    problems.push({ code: ROOM_CODES.lookupFailed, fix: roomFix(ROOM_CODES.lookupFailed, { ...base, errorCode: d.failure.code }) });
  }
  return line(room, label, problems, describe(d));
}

function aliasLine(config: AppConfig, outcome: AliasOutcome, diagnosis: RoomDiagnosis | undefined): RoomCheckLine {
  const source: RoomSource = { key: "matrix.allowed_room_aliases", alias: outcome.alias };
  const facts: FixFacts = {
    homeserverUrl: config.matrix.homeserver_url, userId: config.matrix.user_id, room: outcome.alias, source,
    resolved: outcome.resolved, known: outcome.known,
  };
  if (outcome.code !== null) {
    const label = outcome.resolved === null ? outcome.alias : `${outcome.alias} -> ${outcome.resolved}`;
    return line(outcome.alias, label, [{ code: outcome.code, fix: roomFix(outcome.code, facts) }], "");
  }
  if (outcome.lookupError !== null) {
    const fix = roomFix(ROOM_CODES.lookupFailed, { ...facts, errorCode: outcome.lookupError.code });
    return line(outcome.alias, outcome.alias, [{ code: ROOM_CODES.lookupFailed, fix }], "");
  }
  const served = outcome.served ?? "";
  return { ...roomLine(config, served, `${outcome.alias} -> ${served}`, diagnosis, source), room: outcome.alias };
}

/** Diagnoses every allowed room and alias; resolves to one line per configured entry. Never throws for I/O. */
export async function checkRooms(config: AppConfig, options: RoomCheckOptions = {}): Promise<RoomCheckLine[]> {
  const m = config.matrix;
  const session = options.session ?? openCheckSession(config, options.timeoutMs ?? MATRIX_PROBE_TIMEOUT_MS);
  const client = session.client;
  const secrets = config.secrets.map((secret) => secret.reveal());
  try {
    const lines = await withDeadline(options.timeoutMs ?? MATRIX_PROBE_TIMEOUT_MS, options.signal, async ({ signal }) => {
      const entries: [string, RoomSource][] = [
        ...m.allowed_room_ids.map((room): [string, RoomSource] => [room, BY_ID]),
        ...m.allowed_room_aliases.map((alias): [string, RoomSource] => [alias, { key: "matrix.allowed_room_aliases", alias }]),
      ];
      const failedAll = (code: string): RoomCheckLine[] => entries.map(([room, source]) =>
        line(room, room, [{ code: ROOM_CODES.lookupFailed, fix: roomFix(ROOM_CODES.lookupFailed, { homeserverUrl: m.homeserver_url, userId: m.user_id, room, source, errorCode: code }) }], ""));
      const login = await session.login(signal);
      if (!login.ok) return failedAll(login.error.code);
      const outcomes = await resolveAliases(client, m.allowed_room_aliases, new Set(m.allowed_room_ids), options.knownRoom ?? (() => null), signal);
      const served = [...new Set([...m.allowed_room_ids, ...outcomes.flatMap((o) => (o.served === null || o.code !== null ? [] : [o.served]))])];
      const diagnosed = await diagnoseRooms(client, m.user_id, served, signal);
      if (!diagnosed.ok) return failedAll(diagnosed.error.code);
      const byRoom = new Map(diagnosed.value.map((d) => [d.roomId, d]));
      return [
        ...m.allowed_room_ids.map((room) => roomLine(config, room, room, byRoom.get(room), BY_ID)),
        ...outcomes.map((outcome) => aliasLine(config, outcome, outcome.served === null ? undefined : byRoom.get(outcome.served))),
      ];
    });
    return lines.map((l) => ({ ...l, text: scrubSecrets(printable(l.text, 2_000), secrets) }));
  } finally {
    if (options.session === undefined) await session.end();
  }
}
