// `lapis-ai-controller turns resolve <turn> --as failed|cancelled
// --confirm-external-stopped` (P-TRN-07): the owner records the outcome of a
// submission_unknown or interrupted turn. Without the confirmation flag it is
// a usage error (exit 2) and nothing is opened. It works on the stopped
// service's database: it takes the instance lock, validates every row, runs
// recovery (which only marks lost outcomes and fences), then resolves with an
// audit row; the original command is never retried. While a running service
// holds the lock, the CLI instead calls that service's `turns.resolve` over
// the protocol (listen address and env: owner token from the same config;
// the token never reaches argv or output).
import { ClientError, ControllerClient } from "../client.ts";
import { resolveTurn } from "../domain/turn-recovery.ts";
import { recoverTurns } from "../domain/turn-recovery.ts";
import { isErrorCode, type ErrorCode } from "../domain/errors.ts";
import type { Json } from "../domain/records.ts";
import { protocolConfig } from "../transport/protocol-config.ts";
import { engineStore } from "../persistence/engine-store.ts";
import { openSqliteStore } from "../persistence/sqlite-store.ts";
import { CliError, cliErrorOf, EXIT, exitClassOf, type ExitClass } from "./errors.ts";
import { resolveOwnerToken } from "./token.ts";

/** Parsed `turns resolve` arguments plus the global options it accepts. */
export type TurnsResolveArgs = {
  turnId: string;
  as: "failed" | "cancelled";
  options: { config?: string; workspace?: string; instance?: string; json: boolean };
};

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const GLOBAL_VALUES = ["config", "workspace", "instance"] as const;

/** Parses argv starting at `turns`; every problem is `usage_invalid` (exit 2). */
export function parseTurnsArgs(argv: readonly string[]): TurnsResolveArgs {
  const usage = () => new CliError("usage_invalid", EXIT.usage);
  if (argv[0] !== "turns" || argv[1] !== "resolve" || argv.length > 16) throw usage();
  const options: TurnsResolveArgs["options"] = { json: false };
  let turnId: string | undefined;
  let as: string | undefined;
  let confirmed = false;
  for (let i = 2; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === "--confirm-external-stopped") confirmed = true;
    else if (arg === "--json") options.json = true;
    else if (arg === "--as") as = argv[++i];
    else if (arg.startsWith("--as=")) as = arg.slice(5);
    else if (arg.startsWith("--")) {
      const name = arg.slice(2);
      if (!(GLOBAL_VALUES as readonly string[]).includes(name)) throw usage();
      const value = argv[++i];
      if (value === undefined || value.startsWith("--")) throw usage();
      options[name as (typeof GLOBAL_VALUES)[number]] = value;
    } else if (turnId === undefined) turnId = arg;
    else throw usage();
  }
  if (turnId === undefined || !ID.test(turnId) || (as !== "failed" && as !== "cancelled")) throw usage();
  // The owner must state that external work stopped (P-TRN-05); refusing is a request error.
  if (!confirmed) throw new CliError("confirmation_required", EXIT.usage);
  return { turnId, as, options };
}

/** The config sections and token lookup the running service is reached with. */
export type ServiceAccess = {
  readonly sections: Readonly<Record<string, Json>>;
  readonly env: (name: string) => string | undefined;
};

/** Deadline of the connect, hello and the resolve request against a running service. */
export const ONLINE_REQUEST_TIMEOUT_MS = 30_000;
// Refusals of the request itself are request errors (exit 2); anything else is a failure.
const REQUEST_ERRORS: ReadonlySet<string> = new Set(["turn_not_resolvable", "not_found", "forbidden", "unauthorized", "confirmation_required", "invalid_params", "turn_active", "turn_fenced"]);

/** Resolves the turn in the database at `databasePath`, or through the running service holding it; prints one JSON line. */
export async function runTurnsResolve(args: TurnsResolveArgs, databasePath: string, access: ServiceAccess, writeOut: (s: string) => void): Promise<ExitClass> {
  const opened = openSqliteStore({ path: databasePath });
  if (!opened.ok && opened.error.code === "instance_locked") return resolveOnline(args, access, writeOut);
  if (!opened.ok) throw new CliError(opened.error.code, exitClassOf(opened.error.code));
  const store = opened.value;
  try {
    const engine = engineStore(store);
    recoverTurns(engine);
    const r = resolveTurn(engine, args.turnId, args.as, true, "cli-owner");
    if (!r.ok) {
      const code = isErrorCode(r.code) ? r.code : "internal_error";
      throw new CliError(code, code === "turn_not_resolvable" ? EXIT.usage : exitClassOf(code));
    }
    writeOut(`${JSON.stringify(r.value)}\n`);
    return EXIT.ok;
  } finally {
    store.close();
  }
}

/** A failed client call as the CLI reports it (request errors exit 2). */
export function clientFailure(caught: unknown): CliError {
  if (!(caught instanceof ClientError)) throw caught;
  if (REQUEST_ERRORS.has(caught.code)) return new CliError(caught.code as ErrorCode, EXIT.usage);
  // Transport codes (connect_failed, connection_lost, timeouts) are not registry codes: the service was not reachable.
  if (!isErrorCode(caught.code)) return new CliError("service_unavailable", EXIT.failure, "the running service could not be reached");
  return new CliError(caught.code, EXIT.failure);
}

async function resolveOnline(args: TurnsResolveArgs, access: ServiceAccess, writeOut: (s: string) => void): Promise<ExitClass> {
  const client = await connectOwner(access);
  try {
    // Under one command identity, so a lost reply is settled by commands.get, never by resolving twice.
    const result = await client.resolveTurn(args.turnId, args.as, true);
    writeOut(`${JSON.stringify({ turnId: result.turnId, state: result.state })}\n`);
    return EXIT.ok;
  } catch (caught) {
    throw clientFailure(caught);
  } finally {
    client.close();
  }
}

/** Connects to the running service with the owner token from the config (never in argv or output). */
export async function connectOwner(access: ServiceAccess): Promise<ControllerClient> {
  // Only the owner token is needed here: every entry is checked, but no other token's env: reference is resolved (D3).
  const config = protocolConfig(access.sections, null);
  if (!config.ok) throw cliErrorOf(config.error);
  const { host, port } = config.value.limits;
  if (port === 0) throw new CliError("instance_locked", EXIT.failure, "a service runs but the config names no fixed listen port");
  const token = resolveOwnerToken(access.sections.tokens, access.env);
  if (token === null) throw new CliError("token_unavailable", EXIT.failure, "the config names no resolvable env: owner token");
  const url = `ws://${host.includes(":") ? `[${host}]` : host}:${port}`;
  try {
    return await ControllerClient.connect({ url, credential: { type: "token", token }, maxReconnectAttempts: 1, requestTimeoutMs: ONLINE_REQUEST_TIMEOUT_MS });
  } catch (caught) {
    throw clientFailure(caught);
  }
}
