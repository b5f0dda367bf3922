// The V8 heap flags serve runs with, in one place for every way it starts:
// the launcher and the systemd unit (both the Deno invocation of a release),
// the managed child (it execs the launcher) and a Node process started by
// hand or by the tests. A smaller young generation keeps serve's resident
// set from growing by the semi-spaces V8 would otherwise enlarge under a
// steady stream of turns; the figures are in docs/performance.md.

/** Largest semi-space of V8's young generation, in MiB. */
export const SEMI_SPACE_MIB = 2;

/** The V8 flags, as V8 spells them. */
export const V8_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MIB}`];

/** The flags on a Deno command line (`deno run --v8-flags=...`). */
export function denoV8Args(): string[] {
  return [`--v8-flags=${V8_FLAGS.join(",")}`];
}

/** The flags on a Node command line (`node --max-semi-space-size=N main.ts`). */
export function nodeV8Args(): string[] {
  return [...V8_FLAGS];
}
