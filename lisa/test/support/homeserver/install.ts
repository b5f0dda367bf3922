// Runs one of Lisa's homeserver install scripts (scripts/<name>/install.sh):
// a fast no-op when its cache is ready, a long build or download otherwise.
// The script prints `key=value` lines on stdout and progress on stderr.
import { spawn } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const MAX_CAPTURED_CHARS = 64_000;

/** Path of `scripts/<name>/install.sh` in this package. */
export function installScript(name: string): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), `../../../scripts/${name}/install.sh`);
}

function parseFields(stdout: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  return fields;
}

function appendCapped(buffer: string, chunk: Buffer): string {
  const next = buffer + chunk.toString("utf8");
  return next.length > MAX_CAPTURED_CHARS ? next.slice(-MAX_CAPTURED_CHARS) : next;
}

/**
 * Runs `script` (killed after `timeoutMs`) and returns the values of `keys`; rejects with its stderr otherwise.
 * `echoProgress` passes its stderr through, so a long first build is visibly alive in the test output.
 */
export function runInstallScript(script: string, label: string, keys: readonly string[], timeoutMs: number, echoProgress = false): Promise<Record<string, string>> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn("bash", [script], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env },
      timeout: timeoutMs,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout = appendCapped(stdout, chunk)));
    child.stderr.on("data", (chunk: Buffer) => {
      if (echoProgress) process.stderr.write(chunk);
      stderr = appendCapped(stderr, chunk);
    });
    child.on("error", (error) => reject(new Error(`cannot run ${script}: ${error.message}`)));
    child.on("close", (code, signal) => {
      const fields = parseFields(stdout);
      const values = Object.fromEntries(keys.map((key) => [key, fields.get(key)]));
      if (code === 0 && keys.every((key) => values[key] !== undefined && values[key] !== "")) {
        resolvePromise(values as Record<string, string>);
        return;
      }
      const how = signal === null ? `exit code ${code}` : `signal ${signal} (deadline ${timeoutMs} ms)`;
      reject(new Error(`${label} install failed (${how}):\n${stderr.trim()}`));
    });
  });
}
