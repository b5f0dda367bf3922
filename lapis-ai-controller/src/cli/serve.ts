// `lapis-ai-controller serve`: start the service (store, lock, validation),
// print one readiness line, then run until SIGTERM or SIGINT and stop cleanly.

import process from "node:process";
import type { BootstrapCredential } from "../auth/auth-sessions.ts";
import type { ControllerError, Result } from "../domain/errors.ts";
import type { Json, RetentionProfile } from "../domain/records.ts";
import { cliErrorOf, EXIT, type ExitClass } from "./errors.ts";
import { idleGcSection, processIdleGcPorts, startIdleGc } from "./idle-gc.ts";
import type { ControllerPaths } from "./paths.ts";
import { limitsEntry } from "../persistence/store-limits.ts";
import type { RuntimeHost } from "./runtime-host.ts";

/** The running service as the CLI sees it. */
export interface RunningService {
  readonly readiness: { readonly [key: string]: Json };
  stop(): Promise<void>;
}

/** The port through which the composition root hands the service to the CLI. */
export type StartService = (options: {
  databasePath: string;
  retention: RetentionProfile;
  /** Config sections owned by later issues (protocol: `tokens`, `listen`, `limits`). */
  sections?: Readonly<Record<string, Json>>;
  /** Environment lookup for `env:` secret references. */
  env?: (name: string) => string | undefined;
  /** Credentials not from the config file: the managed child's stdin token (issue 16). */
  bootstrapCredentials?: readonly BootstrapCredential[];
}) => Promise<Result<RunningService, ControllerError>>;

/** Longest wait for the service to stop after a signal. */
export const STOP_DEADLINE_MS = 10_000;

/** Runs `serve` until a shutdown signal; resolves to the exit class. */
export async function serve(
  host: RuntimeHost,
  paths: ControllerPaths,
  retention: RetentionProfile,
  startService: StartService,
  sections: Readonly<Record<string, Json>> = {},
  extra: { readonly readiness?: { readonly [key: string]: Json }; readonly bootstrapCredentials?: readonly BootstrapCredential[]; readonly env?: (name: string) => string | undefined } = {},
): Promise<ExitClass> {
  const env = extra.env ?? ((name: string) => host.env(name));
  const credentials = extra.bootstrapCredentials === undefined ? {} : { bootstrapCredentials: extra.bootstrapCredentials };
  const started = await startService({ databasePath: paths.databasePath, retention, sections, env, ...credentials });
  if (!started.ok) throw cliErrorOf(started.error);
  const service = started.value;
  const readiness = { ...service.readiness, ...extra.readiness, instance: paths.instance, runtime: host.name, pid: process.pid };
  // The signal listener is in place before readiness is reported, so a signal
  // sent right after the readiness line still stops the service cleanly.
  const signalled = new Promise<string>((resolve) => {
    // A signal listener alone does not keep Node's event loop alive; this timer does, until shutdown.
    const keepAlive = setInterval(() => undefined, 60_000);
    const remove = host.onShutdownSignal((received) => {
      clearInterval(keepAlive);
      remove();
      resolve(received);
    });
  });
  host.writeOut(`${JSON.stringify(readiness)}\n`);
  const idleGcPorts = processIdleGcPorts();
  // Gives the heap's garbage back whenever serve goes quiet (idle-gc.ts); config `limits.idleGc`, checked by startService.
  const idleGc = idleGcSection(limitsEntry(sections, "idleGc"));
  const stopIdleGc = idleGcPorts === null || !idleGc.ok || idleGc.value === null ? () => {} : startIdleGc(idleGcPorts, idleGc.value);
  const signal = await signalled;
  stopIdleGc();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), STOP_DEADLINE_MS);
  });
  const outcome = await Promise.race([service.stop().then(() => "stopped" as const), deadline]);
  clearTimeout(timer);
  host.writeErr(`lapis-ai-controller: ${signal}: ${outcome === "stopped" ? "stopped" : "stop deadline passed"}\n`);
  return outcome === "stopped" ? EXIT.ok : EXIT.failure;
}
