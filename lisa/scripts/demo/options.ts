// `npm run demo -- [options]`: the command line of the demo, parsed strictly
// (an unknown or malformed option is a usage error, exit 2).
import { homedir } from "node:os";
import { join, resolve } from "node:path";

/** What the person asked for. */
export interface DemoOptions {
  /** Folder of the demo's data: homeserver, Lisa's state, configuration, persona, logs. */
  readonly dir: string;
  /** The person's own OpenAI-compatible server instead of the bundled model (null: bundled). */
  readonly llm: { readonly url: string; readonly model: string; readonly keyEnv: string | null } | null;
  /** A SearXNG `/search` URL, or null for search off. */
  readonly searchUrl: string | null;
}

/** The parse result: options, the help text, or a usage error. */
export type ParsedArgs =
  | { readonly kind: "run"; readonly options: DemoOptions }
  | { readonly kind: "help" }
  | { readonly kind: "usage"; readonly message: string };

/** The demo's help text. */
export const USAGE = `Usage: npm run demo -- [options]

Starts a real Synapse homeserver, a real llama.cpp llama-server with the small
SmolLM2-135M model (both installed on first use into ~/.cache/lisa), and Lisa,
all on 127.0.0.1; then opens a chat with Lisa in this terminal.

Options:
  --llm-url URL        your own OpenAI-compatible server (llama.cpp, vLLM, Ollama),
                       e.g. http://127.0.0.1:11434/v1, instead of the bundled model
  --llm-model NAME     the model name on that server (required with --llm-url)
  --llm-key-env VAR    environment variable holding that server's API key
  --search-url URL     your SearXNG /search URL (JSON format enabled); without it
                       search is off and Lisa offers the model no web_search tool
  --dir DIR            demo data folder (default ~/.cache/lisa/demo)
  -h, --help           this text

Environment: LISA_LLAMA_THREADS sets llama-server's threads (default 1, which
answers fastest on a busy two-core machine); LISA_SYNAPSE_VENV and
LISA_LLAMA_VENV move the cached installs.`;

const VALUE_OPTIONS = new Set(["--llm-url", "--llm-model", "--llm-key-env", "--search-url", "--dir"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}

function collect(argv: readonly string[]): Map<string, string> | string {
  const values = new Map<string, string>();
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] ?? "";
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    if (!VALUE_OPTIONS.has(name)) return `unknown option ${JSON.stringify(arg)}`;
    const value = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : argv[(index += 1)];
    if (value === undefined || value === "") return `${name} needs a value`;
    if (values.has(name)) return `${name} given twice`;
    values.set(name, value);
  }
  return values;
}

/** Parses the demo's arguments (after `--`). */
export function parseDemoArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedArgs {
  if (argv.includes("-h") || argv.includes("--help")) return { kind: "help" };
  const values = collect(argv);
  if (typeof values === "string") return { kind: "usage", message: values };
  const url = values.get("--llm-url");
  const model = values.get("--llm-model");
  const keyEnv = values.get("--llm-key-env") ?? null;
  const searchUrl = values.get("--search-url") ?? null;
  if ((url === undefined) !== (model === undefined)) return { kind: "usage", message: "--llm-url and --llm-model go together" };
  if (url !== undefined && !isHttpUrl(url)) return { kind: "usage", message: "--llm-url must be an http(s) URL without credentials" };
  if (keyEnv !== null && url === undefined) return { kind: "usage", message: "--llm-key-env needs --llm-url" };
  if (keyEnv !== null && !ENV_NAME.test(keyEnv)) return { kind: "usage", message: "--llm-key-env must be an environment variable name" };
  if (keyEnv !== null && (env[keyEnv] ?? "") === "") return { kind: "usage", message: `environment variable ${keyEnv} is not set` };
  if (searchUrl !== null && !isHttpUrl(searchUrl)) return { kind: "usage", message: "--search-url must be an http(s) URL without credentials" };
  const home = env["HOME"] ?? homedir();
  const dir = resolve(values.get("--dir") ?? join(home, ".cache", "lisa", "demo"));
  const llm = url === undefined || model === undefined ? null : { url, model, keyEnv };
  return { kind: "run", options: { dir, llm, searchUrl } };
}
