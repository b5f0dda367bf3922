// The port between the model loop (llm/) and the research tools. One
// ToolSession exists per invocation; nothing in it is shared.

/** A model-visible tool: its name, description and JSON-schema parameters. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON schema object with `additionalProperties: false`. */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** Bounded model-visible output of one tool call (success or failure). */
export interface ToolResult {
  readonly ok: boolean;
  /** `ok` on success, else a stable error code such as `invalid_url`. */
  readonly code: string;
  /** Bounded text for the model (already wrapped as untrusted data where relevant). */
  readonly content: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Whether retrying the same call may succeed (failures only). */
  readonly retryable?: boolean;
}

/** A citation the host may render: a registered URL and its escaped-later title. */
export interface SourceEntry {
  readonly url: string;
  readonly title: string | null;
}

/** Sources a successful tool result registered during one invocation. */
export interface SourceLookup {
  /** The registered entry for `url` after normalisation, or null if never registered. */
  resolve(url: string): SourceEntry | null;
  /** True when any successful search, fetch or conversion result reached the model. */
  materialResultsUsed(): boolean;
}

/** Everything one invocation's model loop may do with tools. */
export interface ToolSession {
  definitions(): readonly ToolDefinition[];
  /** Validates and runs one call; expected failures come back as `ok: false` results. */
  execute(name: string, rawArguments: string, signal: AbortSignal): Promise<ToolResult>;
  readonly sources: SourceLookup;
  /** Releases artifacts; the session is unusable afterwards. */
  close(): void;
}

/** Opens a fresh, empty tool session for one invocation. */
export type ToolSessionFactory = () => ToolSession;

/**
 * The process-wide permits for Pandoc conversions (one Pandoc can take the
 * whole memory cap, so their number is bounded across all rooms). `acquire`
 * resolves to a release function, or rejects once its signal aborts.
 */
export interface ConversionSlots {
  acquire(signal: AbortSignal): Promise<() => void>;
}
