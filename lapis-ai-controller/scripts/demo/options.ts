// `npm run demo -- [options]`, parsed strictly: an unknown or malformed
// option is a usage error (exit 2). No option takes a secret: a model key is
// named by its environment variable.
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** What the person asked for. */
export type DemoOptions = {
  /** The demo's folder: its HOME (unless operatorHome), agent workspace, Codex home, app and logs. */
  readonly dir: string;
  /** Install the CLI and its config into the operator's own HOME instead of DIR/home. */
  readonly operatorHome: boolean;
  readonly reinstall: boolean;
  /** The operator's Responses-API server instead of the bundled llama-server (null: bundled). */
  readonly model: { readonly url: string; readonly name: string; readonly keyEnv: string | null } | null;
  /** How the controller drives Codex: natively over `codex app-server` (the default) or through codex-acp. */
  readonly executor: DemoExecutor;
};

/** The executors the demo can configure for provider `codex`. */
export type DemoExecutor = "native" | "acp";

/** The parse result. */
export type Parsed = { kind: "run"; options: DemoOptions } | { kind: "help" } | { kind: "usage"; message: string };

/** The demo's help text. */
export const USAGE = `Usage: npm run demo -- [options]

Installs the lapis-ai-controller CLI into a demo HOME, installs llama.cpp's
llama-server and the SmolLM2-135M model on first use (shared cache with Lisa:
~/.cache/lisa/llama-venv-<version>), starts them and \`serve\` on 127.0.0.1,
then opens a terminal chat built on the SDK. /quit, Ctrl-D, or Ctrl-C while
idle stop everything it started.

Options:
  --model-url URL      your own Responses-API server (OpenAI, llama-server, vLLM,
                       Ollama), e.g. https://api.openai.com/v1, instead of SmolLM2
  --model NAME         the model name there (required with --model-url)
  --model-key-env VAR  environment variable holding that server's API key
  --dir DIR            demo folder (default ~/.local/state/lapis-ai-controller-demo)
  --operator-home      install the CLI and config into your own HOME (~/.local/bin,
                       ~/.config/lapis-ai-controller) instead of DIR/home
  --reinstall          install the CLI again even if DIR's launcher exists
  --executor native|acp
                       how the controller drives Codex: natively over
                       \`codex app-server\` (default) or through codex-acp (ACP)
  -h, --help           this text`;

const VALUES = new Set(["--model-url", "--model", "--model-key-env", "--dir", "--executor"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

function httpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "" && url.search === "";
  } catch {
    return false;
  }
}

/** Parses the demo's arguments. */
export function parseArgs(argv: readonly string[], home: string = homedir()): Parsed {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "-h" || arg === "--help") return { kind: "help" };
    if (arg === "--operator-home" || arg === "--reinstall") { flags.add(arg); continue; }
    if (!VALUES.has(arg)) return { kind: "usage", message: `unknown option ${arg.slice(0, 40)}` };
    const value = argv[i + 1];
    if (value === undefined || value.startsWith("--")) return { kind: "usage", message: `${arg} needs a value` };
    values.set(arg, value);
    i++;
  }
  const url = values.get("--model-url");
  const name = values.get("--model");
  const keyEnv = values.get("--model-key-env") ?? null;
  if ((url === undefined) !== (name === undefined)) return { kind: "usage", message: "--model-url and --model go together" };
  if (url !== undefined && !httpUrl(url)) return { kind: "usage", message: "--model-url must be an http(s) URL without credentials or query" };
  if (keyEnv !== null && (url === undefined || !ENV_NAME.test(keyEnv))) return { kind: "usage", message: "--model-key-env names an environment variable, with --model-url" };
  const executor = values.get("--executor") ?? "native";
  if (executor !== "native" && executor !== "acp") return { kind: "usage", message: "--executor is native or acp" };
  const dir = resolve(values.get("--dir") ?? join(home, ".local", "state", "lapis-ai-controller-demo"));
  return {
    kind: "run",
    options: {
      dir,
      operatorHome: flags.has("--operator-home"),
      reinstall: flags.has("--reinstall"),
      model: url === undefined || name === undefined ? null : { url: url.replace(/\/+$/, ""), name, keyEnv },
      executor,
    },
  };
}
