import type { FileConfig } from "./schema.ts";
import type { Secret } from "./secret.ts";

/** Matrix settings with the password resolved. */
export type MatrixConfig = Readonly<Omit<FileConfig["matrix"], "password" | "access_token"> & { password: Secret }>;
/** LLM settings with the key and header values resolved. */
export type LlmConfig = Readonly<Omit<FileConfig["llm"], "api_key" | "extra_headers"> & {
  api_key: Secret | null;
  extra_headers: Readonly<Record<string, Secret>>;
}>;
/** Persona settings with the persona text read from its file. */
export type PersonaConfig = Readonly<FileConfig["persona"] & { text: string }>;
/** Search settings with the optional key resolved; `endpoint` null means search is off (no `web_search` tool). */
export type SearchConfig = Readonly<Omit<FileConfig["search"], "api_key" | "endpoint"> & { endpoint: string | null; api_key: Secret | null }>;
/** Search settings of a configuration that has a search endpoint. */
export type EnabledSearchConfig = SearchConfig & { readonly endpoint: string };
/** Conversation-context limits. */
export type ContextConfig = Readonly<FileConfig["context"]>;
/** Web download and conversion limits. */
export type WebConfig = Readonly<FileConfig["web"]>;
/** Process and database settings. */
export type RuntimeConfig = Readonly<FileConfig["runtime"]>;

/** Encrypted rooms: off unless enabled; when on, the crypto store's passphrase is resolved. */
export type E2eeConfig = Readonly<Omit<FileConfig["e2ee"], "store_passphrase" | "recovery_key"> & { store_passphrase: Secret | null; recovery_key: Secret | null }>;

/** Streaming replies: off unless enabled. */
export type StreamingConfig = Readonly<FileConfig["streaming"]>;

/** The validated, immutable configuration Lisa runs with. */
export interface AppConfig {
  readonly matrix: MatrixConfig;
  readonly llm: LlmConfig;
  readonly persona: PersonaConfig;
  readonly context: ContextConfig;
  readonly search: SearchConfig;
  readonly web: WebConfig;
  readonly runtime: RuntimeConfig;
  readonly e2ee: E2eeConfig;
  readonly streaming: StreamingConfig;
  /** Every resolved secret, for the log scrubber and canary checks. */
  readonly secrets: readonly Secret[];
}
