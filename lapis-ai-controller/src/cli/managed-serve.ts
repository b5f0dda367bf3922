// `serve --managed`: the child side of managed integrations (P-SDK-04..12).
// It reads exactly one JSON request line from stdin (token, absolute
// databasePath, optional generic provider/workspace definitions), keeps stdin
// open, starts the same service as `serve` with the token as a bootstrap
// credential, and prints one readiness line without credentials that carries
// the build identity. A failure before readiness prints {"ready":false,
// "error":<code>} so the parent learns the cause. stdin ending means the
// parent is gone: the service stops as on SIGTERM.

import process from "node:process";
import { isAbsolute } from "node:path";
import { makeCredential, tokenShapeValid } from "../auth/bootstrap.ts";
import { PROTOCOL_VERSION } from "../domain/protocol.ts";
import type { Json, RetentionProfile } from "../domain/records.ts";
import { CliError, EXIT, type ExitClass } from "./errors.ts";
import type { ControllerPaths } from "./paths.ts";
import type { RuntimeHost } from "./runtime-host.ts";
import { serve, type StartService } from "./serve.ts";

/** Longest wait for the request line. */
export const REQUEST_DEADLINE_MS = 30_000;
/** Largest request line (bytes). */
export const REQUEST_MAX_BYTES = 256 * 1024;
/** The only keys a managed request may have; nothing for Nostr signing or vault credentials (P-SDK-12). */
export const REQUEST_KEYS = ["protocol", "token", "databasePath", "retention", "listen", "providers", "workspaces", "limits"] as const;

/** A validated managed request. */
export interface ManagedRequest {
  readonly token: string;
  readonly databasePath: string;
  readonly retention: RetentionProfile;
  readonly sections: Readonly<Record<string, Json>>;
}

/** Validates a request line strictly; the error names a key at most. */
export function parseManagedRequest(line: string): ManagedRequest | { readonly error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { error: "request" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { error: "request" };
  const r = value as Record<string, Json>;
  for (const key of Object.keys(r)) if (!(REQUEST_KEYS as readonly string[]).includes(key)) return { error: `request.${key.slice(0, 64)}` };
  if (r.protocol !== PROTOCOL_VERSION) return { error: "request.protocol" };
  if (typeof r.token !== "string" || !tokenShapeValid(r.token)) return { error: "request.token" };
  if (typeof r.databasePath !== "string" || !isAbsolute(r.databasePath) || r.databasePath.length > 4_096) return { error: "request.databasePath" };
  const retention = r.retention ?? "full";
  if (retention !== "full" && retention !== "metadata-only") return { error: "request.retention" };
  const sections: Record<string, Json> = { listen: r.listen ?? { host: "127.0.0.1", port: 0 } };
  for (const key of ["providers", "workspaces", "limits"] as const) if (r[key] !== undefined) sections[key] = r[key] as Json;
  return { token: r.token, databasePath: r.databasePath, retention, sections };
}

/** Reads one line from stdin without ever waiting for stdin to end; stdin stays open. */
function readRequestLine(): Promise<string | null> {
  return new Promise((resolve) => {
    let buffered = "";
    const finish = (line: string | null) => {
      clearTimeout(timer);
      process.stdin.off("data", onData);
      process.stdin.pause();
      resolve(line);
    };
    const onData = (chunk: Buffer | string) => {
      buffered += chunk.toString();
      const nl = buffered.indexOf("\n");
      if (nl !== -1) finish(buffered.slice(0, nl));
      else if (buffered.length > REQUEST_MAX_BYTES) finish(null);
    };
    const timer = setTimeout(() => finish(null), REQUEST_DEADLINE_MS);
    process.stdin.on("data", onData);
  });
}

/** Runs `serve --managed`; resolves to the exit class. */
export async function serveManaged(
  host: RuntimeHost,
  paths: ControllerPaths,
  startService: StartService,
  build: { readonly digest: string; readonly version: string } | null,
): Promise<ExitClass> {
  const report = (code: string) => host.writeOut(`${JSON.stringify({ ready: false, error: code })}\n`);
  const line = await readRequestLine();
  const request = line === null ? { error: "request" } : parseManagedRequest(line);
  if ("error" in request) {
    report("invalid_params");
    throw new CliError("invalid_params", EXIT.usage);
  }
  // The parent closing our stdin (it exited) stops the service like SIGTERM.
  const childHost: RuntimeHost = {
    ...host,
    onShutdownSignal(handler) {
      const remove = host.onShutdownSignal(handler);
      const onEnd = () => handler("SIGTERM");
      process.stdin.once("end", onEnd);
      process.stdin.resume();
      return () => {
        remove();
        process.stdin.off("end", onEnd);
        process.stdin.pause();
      };
    },
  };
  const credential = makeCredential("managed", request.token, {});
  try {
    return await serve(childHost, { ...paths, databasePath: request.databasePath }, request.retention, startService, request.sections, {
      readiness: { managed: true, build: build === null ? null : build.digest },
      bootstrapCredentials: [credential],
      env: () => undefined,
    });
  } catch (caught) {
    if (caught instanceof CliError) report(caught.code);
    throw caught;
  }
}
