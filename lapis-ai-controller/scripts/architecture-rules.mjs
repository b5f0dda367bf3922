// The architecture rules of plan.md 2.10 and 4.6, as data for
// check-architecture.mjs: layout, the import matrix and the package rules.

/** Counted-line budgets (AIC-ARCH-002a). */
export const PRODUCTION_BUDGET = 300;
export const TEST_BUDGET = 500;
/** A recorded budget is stale when the counted size plus this is still below it (AIC-ARCH-002c). */
export const STALE_MARGIN = 20;

/** Folders production source may live in (AIC-ARCH-001a). */
export const SOURCE_FOLDERS = ["auth", "capture", "cli", "domain", "execution", "memory", "persistence", "sdk", "transport"];

/** The only files allowed directly under src/: facades and composition roots (AIC-ARCH-001e). */
export const ROOT_FILES = ["client", "runtime", "managed", "contracts", "index", "main", "service"];

/**
 * Named modules that must exist (AIC-ARCH-001b/c/d): the store, the protocol's
 * dispatch and snapshot, the engine's turn execution and transcript capture,
 * endpoint registration, and the memory profiles (vault under memory/lapis/,
 * group under memory/group/).
 */
export const REQUIRED_FILES = [
  "src/persistence/sqlite-store.ts",
  "src/transport/dispatch.ts",
  "src/transport/client-snapshot.ts",
  "src/domain/endpoint-registration.ts",
  "src/domain/turn-execution.ts",
  "src/domain/transcript-capture.ts",
  // the vault memory profile (AIC-ARCH-001d)
  "src/memory/lapis/episode.ts",
  "src/memory/lapis/search.ts",
  "src/memory/lapis/ingest.ts",
  "src/memory/lapis/inspect.ts",
  "src/memory/lapis/forget.ts",
  "src/memory/lapis/consolidate.ts",
  // the group memory profile (AIC-ARCH-001d)
  "src/memory/group/store.ts",
  "src/memory/group/search.ts",
  "src/memory/group/drain.ts",
  "src/memory/group/schema.ts",
];

/** Entries allowed at the package root; anything else is a stray root file. */
export const ROOT_ENTRIES = [
  ".ci", ".gitignore", "README.md", "package.json", "package-lock.json", "tsconfig.json", "deno.json", "jsr.json",
  "src", "test", "scripts", "docs", "bench", "node_modules",
];

/**
 * Module -> modules it may import (value and type imports alike). Root files
 * are named `root:<file>`. `*` allows everything.
 */
export const IMPORT_MATRIX = {
  domain: [],
  persistence: ["domain"],
  auth: ["domain"],
  capture: ["domain"],
  execution: ["domain"],
  // memory/: a library the package exports; it runs in the application's process over ports the
  // application supplies, so it takes only domain types and node: built-ins (never app, transport,
  // service, cli, execution, persistence, capture code).
  memory: ["domain"],
  transport: ["domain", "auth"],
  cli: ["domain", "auth", "transport", "persistence", "root:client"],
  // sdk/: the typed SDK surface behind client.ts (issue 25), browser-safe: domain only.
  sdk: ["domain"],
  "root:client": ["transport/ws-client.ts", "transport/frames.ts", "domain", "sdk"],
  "root:runtime": ["root:client", "domain"],
  "root:managed": ["root:client", "domain"],
  "root:contracts": ["domain"],
  "root:service": ["*"],
  // main is a composition root too: it hands the service's start function to the CLI.
  "root:main": ["cli", "root:service", "domain"],
  "root:index": ["root:client", "root:runtime", "root:managed", "root:contracts", "root:service", "domain"],
};

/**
 * Sub-folders that are closed to each other inside their module: a file under
 * one may not import a file under another (the two memory profiles share only
 * the files directly under src/memory/). A shared file under the module root
 * may not import a profile either, except the module's index.ts facade.
 */
export const SEPARATE_SUBFOLDERS = [{ module: "memory", folders: ["lapis", "group", "native"], facade: "index.ts" }];

/** Files with a narrower allowance than their module (they ship in the browser SDK). */
export const FILE_MATRIX = {
  "transport/ws-client.ts": ["transport/frames.ts", "domain"],
};

/** Bare packages confined to some folders (plan 4.6 package rules); test/support/ may use them too. */
export const CONFINED_PACKAGES = [
  // The group memory profile keeps its lexical index in SQLite (FTS5); nothing else in memory/ may.
  { pattern: /^node:sqlite$/, folders: ["persistence", "memory/group"] },
  // The native embedding provider's inference runtime (an optional peer dependency); nothing else loads it.
  { pattern: /^onnxruntime-node(\/|$)/, folders: ["memory/native"] },
  { pattern: /^ws(\/|$)/, folders: ["transport"] },
  { pattern: /^node:worker_threads$/, folders: ["capture"] },
  { pattern: /^@agentclientprotocol\/sdk(\/|$)/, folders: ["execution"], support: true },
  { pattern: /^acpx(\/|$)/, folders: ["execution"], support: true },
  { pattern: /^@modelcontextprotocol\/sdk(\/|$)/, folders: ["execution"], support: true },
];

/** Packages nobody may import: consuming apps, vault/UI code, nostr relays and signers (P-ARC-12, P-MEM-05/11). */
export const FORBIDDEN_PACKAGES = [
  /^@lapismd\/lapis-notes(\/|$)/,
  /^@lapis-notes\//,
  /^obsidian(\/|$)/,
  /nostr/i,
];

/** The one file allowed to touch the `Deno` global. */
export const RUNTIME_SHIM = "src/cli/runtime-host.ts";
