// `lapis-ai-controller turns resolve <turn> --as failed|cancelled
// --confirm-external-stopped` (P-TRN-07): the owner records the outcome of a
// submission_unknown or interrupted turn. Without the confirmation flag it is
// a usage error (exit 2) and nothing is opened. It works on the stopped
// service's database: it takes the instance lock, validates every row, runs
// recovery (which only marks lost outcomes and fences), then resolves with an
// audit row; the original command is never retried. While a service holds
// the lock it fails `instance_locked` (use turns.resolve over the protocol).
import { resolveTurn } from "../domain/turn-recovery.ts";
import { recoverTurns } from "../domain/turn-recovery.ts";
import { isErrorCode } from "../domain/errors.ts";
import { engineStore } from "../persistence/engine-store.ts";
import { openSqliteStore } from "../persistence/sqlite-store.ts";
import { CliError, EXIT, exitClassOf, type ExitClass } from "./errors.ts";

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

/** Resolves the turn in the database at `databasePath`; prints one JSON line. */
export function runTurnsResolve(args: TurnsResolveArgs, databasePath: string, writeOut: (s: string) => void): ExitClass {
  const opened = openSqliteStore({ path: databasePath });
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
