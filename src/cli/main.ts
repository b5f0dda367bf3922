import { parseCommand, USAGE } from "./args.ts";
import { checkCommand } from "./check.ts";
import { EXIT } from "./exit-codes.ts";
import { processOutput, type Output } from "./output.ts";
import { runCommand } from "./run.ts";
import { statusCommand } from "./status.ts";
import { lisaVersion } from "./version.ts";

/** Runs the `lisa` command line and resolves to the process exit status. */
export async function runCli(argv: readonly string[], output: Output = processOutput): Promise<number> {
  const command = parseCommand(argv);
  switch (command.kind) {
    case "help":
      output.out(USAGE);
      return EXIT.ok;
    case "version":
      output.out(`lisa ${lisaVersion()}`);
      return EXIT.ok;
    case "usage_error":
      output.err(`lisa: ${command.message}`);
      output.err(USAGE);
      return EXIT.usage;
    case "check":
      return checkCommand(command.configPath, command.offline, output);
    case "status":
      return statusCommand(command.configPath, command.json, output);
    case "run":
      return runCommand(command.configPath, command.pretty, output);
  }
}
