// The environment the demo gives its children. Only what they need crosses:
// every child gets PATH, the locale and terminal; the install steps (npm,
// pip, the llama.cpp build) also get the user's network settings (CA
// bundles, proxies, npm and pip configuration), so an install behind a
// company proxy with its own CA works as it does in the user's shell. The
// servers do not get the proxies: their traffic is loopback only. Nothing
// else of the user's environment (API keys, tokens) reaches a child unless
// the operator names it (--model-key-env). The network settings are not
// secrets of this project, but they are never printed either.

/** Exact names every child gets when set. */
const RUNTIME = ["PATH", "LANG", "LC_ALL", "TERM", "TMPDIR"] as const;

/** Exact names the install steps get as well. */
const INSTALL = [
  "LISA_LLAMA_VENV", "LISA_LLAMA_PYTHON", "LISA_LLAMA_JOBS",
  "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
  "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "no_proxy", "all_proxy",
] as const;

/** Name prefixes the install steps get (npm's and pip's own configuration). */
const INSTALL_PREFIXES = ["npm_config_", "NPM_CONFIG_", "PIP_"] as const;

function pick(source: NodeJS.ProcessEnv, keep: (key: string) => boolean, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) if (value !== undefined && keep(key)) env[key] = value;
  env.PATH ??= "/usr/bin:/bin";
  return { ...env, ...extra };
}

/** What a server or the chat app inherits from `source`, plus `extra`. */
export function runtimeEnvironment(source: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  return pick(source, (key) => (RUNTIME as readonly string[]).includes(key), extra);
}

/** What an install step (npm, pip, the llama.cpp build) inherits from `source`, plus `extra`. */
export function installEnvironment(source: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const names: readonly string[] = [...RUNTIME, ...INSTALL];
  return pick(source, (key) => names.includes(key) || INSTALL_PREFIXES.some((p) => key.startsWith(p)), extra);
}
