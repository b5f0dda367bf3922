// The one runtime shim (decision 2 of the spec README): the only file that
// touches the `Deno` global. Everything else uses node: built-ins, which run
// the same on Node 24 and Deno 2.9.

import process from "node:process";

/** The runtime the process runs on. */
export type RuntimeName = "deno" | "node";

/** Shutdown signals the service honours. */
export type ShutdownSignal = "SIGTERM" | "SIGINT";

/** The part of the runtime the CLI needs. */
export interface RuntimeHost {
  readonly name: RuntimeName;
  readonly version: string;
  /** The user's arguments (after the program and script). */
  readonly args: readonly string[];
  env(name: string): string | undefined;
  /** Calls `handler` once on SIGTERM or SIGINT; returns a function that removes the listeners. */
  onShutdownSignal(handler: (signal: ShutdownSignal) => void): () => void;
  writeOut(text: string): void;
  writeErr(text: string): void;
}

interface DenoGlobal {
  readonly args: readonly string[];
  readonly version: { readonly deno: string };
  addSignalListener(signal: ShutdownSignal, handler: () => void): void;
  removeSignalListener(signal: ShutdownSignal, handler: () => void): void;
}

const SIGNALS: readonly ShutdownSignal[] = ["SIGTERM", "SIGINT"];

function denoGlobal(): DenoGlobal | undefined {
  return (globalThis as { Deno?: DenoGlobal }).Deno;
}

/** The host of the current process. */
export function runtimeHost(): RuntimeHost {
  const deno = denoGlobal();
  const common = {
    env: (name: string) => process.env[name],
    writeOut: (text: string) => void process.stdout.write(text),
    writeErr: (text: string) => void process.stderr.write(text),
  };
  if (deno !== undefined) {
    return {
      ...common,
      name: "deno",
      version: deno.version.deno,
      args: [...deno.args],
      onShutdownSignal(handler) {
        const listeners = SIGNALS.map((signal) => [signal, () => handler(signal)] as const);
        for (const [signal, listener] of listeners) deno.addSignalListener(signal, listener);
        return () => {
          for (const [signal, listener] of listeners) deno.removeSignalListener(signal, listener);
        };
      },
    };
  }
  return {
    ...common,
    name: "node",
    version: process.versions.node,
    args: process.argv.slice(2),
    onShutdownSignal(handler) {
      const listeners = SIGNALS.map((signal) => [signal, () => handler(signal)] as const);
      for (const [signal, listener] of listeners) process.on(signal, listener);
      return () => {
        for (const [signal, listener] of listeners) process.off(signal, listener);
      };
    },
  };
}
