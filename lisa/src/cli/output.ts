/** Where a command writes its human- or machine-readable output (injectable for tests). */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

/** The part of a writable stream `guardedWriter` uses (process.stdout, process.stderr). */
export interface WriteTarget {
  write(chunk: string): boolean;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/**
 * A line writer that survives a closed pipe: the first write error (EPIPE
 * when a reader like `head -1` went away, or any other) silences the stream
 * for good instead of crashing the command, so the command finishes with its
 * own exit status.
 */
export function guardedWriter(target: WriteTarget): (line: string) => void {
  let broken = false;
  let listening = false;
  return (line) => {
    if (!listening) {
      listening = true;
      target.on("error", () => {
        broken = true;
      });
    }
    if (broken) return;
    try {
      target.write(`${line}\n`);
    } catch {
      broken = true;
    }
  };
}

/** Output to the process's stdout and stderr, each guarded against a closed pipe. */
export const processOutput: Output = {
  out: guardedWriter(process.stdout),
  err: guardedWriter(process.stderr),
};
