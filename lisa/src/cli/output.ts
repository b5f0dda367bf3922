/** Where a command writes its human- or machine-readable output (injectable for tests). */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

/** Output to the process's stdout and stderr. */
export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};
