// The V8 heap flags serve runs with, in one place for every way it starts:
// the launcher and the systemd unit (both the Deno invocation of a release),
// the managed child (it execs the launcher), the tests and the bench (their
// serve children get them on the command line) and a Node `serve` started by
// hand without them, which replaces itself with one that has them. A smaller young generation keeps serve's resident
// set from growing by the semi-spaces V8 would otherwise enlarge under a
// steady stream of turns; the figures are in docs/performance.md.

/** Largest semi-space of V8's young generation, in MiB. */
export const SEMI_SPACE_MIB = 2;

/**
 * The V8 flags, as V8 spells them. `--expose-gc` gives serve's idle collector
 * (idle-gc.ts) V8's `gc`: Deno never runs V8's memory reducer, so serve returns
 * its garbage's pages itself once it goes quiet.
 */
export const V8_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MIB}`, "--expose-gc"];

/**
 * Deno's serve also stops at V8's Maglev tier (`--max-opt=2`) and compiles on
 * its own thread (`--no-concurrent-recompilation`), P-DNO-05. Once turns
 * made functions hot, TurboFan's compiler (its code in the `deno` binary)
 * added 2-3 MiB to a Deno serve's resident set, and the compiler threads'
 * malloc arenas kept another 5-7 MiB their jobs had freed: together most of
 * serve's growth over 1,000 turns. Maglev compiles a function in well under a
 * millisecond, and a turn's CPU is the same either way. What it gives up is
 * TurboFan's speed on long loops (tool-call validation of a 1 MiB argument,
 * within its goal either way). docs/performance.md has the figures. Node's
 * serve, whose growth is within its goal, keeps its defaults.
 */
export const DENO_V8_FLAGS: readonly string[] = [...V8_FLAGS, "--max-opt=2", "--no-concurrent-recompilation"];

/** The flags on a Deno command line (`deno run --v8-flags=...`). */
export function denoV8Args(): string[] {
  return [`--v8-flags=${DENO_V8_FLAGS.join(",")}`];
}

/** The flags on a Node command line (`node --max-semi-space-size=N main.ts`). */
export function nodeV8Args(): string[] {
  return [...V8_FLAGS];
}

/** What the re-exec reads of a Node process (Node's `process`, or a test's stand-in). */
export interface NodeProcessFacts {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
}

/**
 * The command line a Node process must exec to carry the flags, or null when
 * it already carries them. V8 sizes the heap when the process starts (setting
 * the flags later changes nothing), so a hand-run `node src/main.ts serve`
 * becomes, under the same pid (`process.execve`), the same command with them.
 */
export function nodeReexecArgv(p: NodeProcessFacts): string[] | null {
  const flags = nodeV8Args();
  if (flags.every((flag) => p.execArgv.includes(flag))) return null;
  return [p.execPath, ...flags, ...p.execArgv, ...p.argv.slice(1)];
}
