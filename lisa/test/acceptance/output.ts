// Lisa's stdout and stderr are read from pipes as the parent's event loop gets
// to them: a run's `exit` can be seen before its last lines have been read.
// Checks of a finished run's output therefore wait for both pipes to end.
import { type AcceptanceWorld, type LisaExit, type LisaRun, pollUntil } from "../support/acceptance-world.ts";

/** Waits until every exited run's stdout and stderr have been read to the end. */
export async function outputRead(world: AcceptanceWorld, timeoutMs = 20_000): Promise<void> {
  const ended = (run: LisaRun): boolean => [run.child.stdout, run.child.stderr].every((stream) => stream === null || stream.readableEnded);
  const exited = world.lisa.runs.filter((run) => run.exit !== null);
  await pollUntil(() => exited.every(ended), timeoutMs, () => "Lisa's output read to the end after she exited");
}

/** Stops Lisa (SIGTERM) and waits until all of her output has been read; resolves to how the run ended. */
export async function stopAndReadOutput(world: AcceptanceWorld): Promise<LisaExit> {
  const exit = await world.lisa.stop();
  await outputRead(world);
  return exit;
}
