import { parseCommand, USAGE } from "./args.ts";
import { EXIT } from "./exit-codes.ts";
import { processOutput, type Output } from "./output.ts";
import { lisaVersion } from "./version.ts";

// Each command loads only its own modules: `--version`, `status` and
// `check --offline` start without the service's HTTP, Markdown and HTML stacks.

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
      return (await import("./check.ts")).checkCommand(command.configPath, command.offline, output);
    case "status":
      return (await import("./status.ts")).statusCommand(command.configPath, command.json, output);
    case "e2ee":
      return (await import("./e2ee.ts")).e2eeCommand(command.action, command.configPath, output);
    case "run":
      return (await import("./run.ts")).runCommand(command.configPath, command.pretty, output);
  }
}
