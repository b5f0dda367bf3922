import type { GenericSchema } from "valibot";
import type { LisaError, Result, ToolInputError } from "../errors.ts";
import type { Logger } from "../log/logger.ts";
import type { ArtifactStore } from "./artifacts.ts";
import type { SourceEntry, ToolDefinition } from "./port.ts";
import { validateArguments } from "./arguments.ts";

/** What a running tool may touch: its deadline signal and this invocation's artifacts. */
export interface ToolContext {
  /** Aborts on the caller's cancellation or the tool's own deadline. */
  readonly signal: AbortSignal;
  readonly artifacts: ArtifactStore;
  readonly log: Logger;
}

/** A successful tool run before the session wraps and bounds it. */
export interface ToolSuccess {
  /** Untrusted text for the model; the session wraps and truncates it. */
  readonly data: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Sources to register once the result is actually returned to the model. */
  readonly sources: readonly SourceEntry[];
  /** Whether the result carries web material. */
  readonly material: boolean;
}

/** The outcome of one validated tool run. */
export type ToolOutcome = Result<ToolSuccess, LisaError>;

/** A validated call, ready to run. */
export type PreparedCall = (context: ToolContext) => Promise<ToolOutcome>;

/** One entry of the fixed tool registry. */
export interface Tool {
  readonly definition: ToolDefinition;
  /** The session's backstop deadline for one call, in milliseconds. */
  readonly deadlineMs: number;
  /** Validates the parsed argument object and binds it to the executor. */
  prepare(args: Record<string, unknown>): Result<PreparedCall, ToolInputError>;
}

/** The typed parts of a tool: JSON schema, valibot schema and executor side by side. */
export interface ToolSpec<Input> {
  readonly definition: ToolDefinition;
  readonly schema: GenericSchema<unknown, Input>;
  readonly deadlineMs: number;
  run(input: Input, context: ToolContext): Promise<ToolOutcome>;
}

/** Erases a tool's input type behind validation so the registry can hold it. */
export function defineTool<Input>(spec: ToolSpec<Input>): Tool {
  const knownKeys = Object.keys((spec.definition.parameters["properties"] ?? {}) as Record<string, unknown>);
  return {
    definition: spec.definition,
    deadlineMs: spec.deadlineMs,
    prepare(args) {
      const input = validateArguments(spec.schema, knownKeys, args);
      if (!input.ok) return input;
      const value = input.value;
      return { ok: true, value: (context: ToolContext) => spec.run(value, context) };
    },
  };
}
