// Composition root of the service: opens the store (instance lock, WAL +
// FULL, validation of every retained row) before any later startup step runs,
// so recovery and external work never see an unvalidated database (P-STO-05); later steps follow.

import process from "node:process";
import { type ControllerError, controllerError, err, ok, type Result } from "./domain/errors.ts";
import type { Clock } from "./domain/ports.ts";
import { PROTOCOL_VERSION } from "./domain/protocol.ts";
import type { Json, RetentionProfile } from "./domain/records.ts";
import { openSqliteStore, type SqliteStore } from "./persistence/sqlite-store.ts";
import type { BootstrapCredential } from "./auth/auth-sessions.ts";
import type { TurnPort } from "./domain/protocol-ports.ts";
import { authSessionStore } from "./persistence/auth-store.ts";
import { protocolConfig } from "./transport/protocol-config.ts";
import { startProtocol, type RunningProtocol } from "./transport/protocol.ts";
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { journalNotices, ThreadEventHub } from "./domain/event-hub.ts";
import { parseEngineConfig } from "./domain/turn-config.ts";
import { engineTurnPort } from "./domain/turn-port.ts";
import { TurnService } from "./domain/turn-service.ts";
import { checkWorkspaceAliases } from "./domain/workspace-lease.ts";
import { currentLaunchHost } from "./execution/acp-launch.ts";
import { offlineForgetter, providerExecutors, resolveProviderLaunch } from "./execution/provider-executors.ts";
import { engineStore } from "./persistence/engine-store.ts";
import { turnMethods } from "./transport/methods-turns.ts";
import { historyMethods } from "./transport/methods-history.ts";
import { blockRedactingExecutor } from "./capture/event-blocks.ts";
import { applicationToolHost } from "./capture/capture-port.ts";
import { applicationContextPort } from "./capture/context-port.ts";
import { journalAppendProgress, transcriptAppender, withTranscriptAppend, type TranscriptAppender } from "./capture/transcript-append.ts";
import { memoryRecall, withMemoryRecall } from "./capture/memory-recall.ts";
import { memoryToolHost, withMemoryTools } from "./capture/memory-tools.ts";
import { applicationMcpResolver } from "./capture/mcp-port.ts";
import { mcpSourceKey } from "./domain/contract/mcp-servers.ts";
import type { MemoryLimits } from "./domain/memory-budget.ts";
import { bindingOf } from "./domain/protocol-ports.ts";
import type { EndpointRegistry } from "./domain/endpoint-registration.ts";
import { ToolBridge } from "./execution/tool-bridge.ts";
import { captureSettings, createCapture, redactionFacts, type CaptureParts } from "./capture/capture-setup.ts";
import { limitsEntry, storageSection, volatileSection } from "./persistence/store-limits.ts";
import type { Executor, ForgetResult, SessionForget } from "./domain/executor-port.ts";
import { LIFECYCLE_LIMITS, type LifecyclePorts } from "./domain/thread-lifecycle.ts";
import { parseApplications, type ApplicationSettings } from "./domain/token-usage.ts";
import { quotaTurnPort, turnGate } from "./domain/quota-port.ts";
import { startRetention } from "./domain/retention-sweep.ts";
import { lifecycleParts } from "./persistence/lifecycle-parts.ts";
import { eraseThreadRows } from "./persistence/foreign-rows.ts";
import { lifecycleMethods } from "./transport/methods-lifecycle.ts";
import { idleGcSection } from "./cli/idle-gc.ts";

/** The `limits` subsections and the part that reads each; any other key is refused. */
const LIMIT_SECTIONS = ["protocol", "turns", "capture", "volatile", "storage", "idleGc"];

function invalid(where: string): Result<void> {
  return err(controllerError("config_invalid", { where: where.startsWith("config") ? where : `config.${where}` }));
}

/**
 * The whole config check `serve` runs before it opens anything; `doctor` and
 * `status` run the same one. Failures name the key path, never a value. With
 * `env` null token references are checked but not resolved.
 */
export function checkServiceConfig(
  sections: Readonly<Record<string, Json>>,
  env: ((name: string) => string | undefined) | null,
  extra: readonly BootstrapCredential[] = [],
): Result<void> {
  const limits = sections.limits;
  if (limits !== undefined) {
    if (limits === null || typeof limits !== "object" || Array.isArray(limits)) return invalid("config.limits");
    for (const key of Object.keys(limits)) if (!LIMIT_SECTIONS.includes(key)) return invalid(`config.limits.${key.slice(0, 64)}`);
  }
  const protocol = protocolConfig(sections, env, extra);
  if (!protocol.ok) return protocol;
  const engine = parseEngineConfig(sections);
  if (!engine.ok) return invalid(engine.error.where ?? "config");
  const capture = captureSettings(limitsEntry(sections, "capture"));
  if (!capture.ok) return invalid(capture.where);
  const volatile = volatileSection(sections);
  if (!volatile.ok) return volatile;
  const storage = storageSection(sections);
  if (!storage.ok) return storage;
  const idleGc = idleGcSection(limitsEntry(sections, "idleGc"));
  if (!idleGc.ok) return invalid(idleGc.where);
  const applications = parseApplications(sections.applications);
  if (!applications.ok) return applications;
  const aliases = checkWorkspaceAliases(engine.value.workspaces, realpathSync);
  if (!aliases.ok) return err(controllerError(aliases.code, { where: `config.workspaces.${aliases.ids.at(-1) ?? ""}` }));
  return ok(undefined);
}

/** The turn engine as the service composes it (issue 14). */
interface EngineParts {
  readonly turns: TurnService;
  readonly hub: ThreadEventHub;
  readonly known: { readonly workspaces: ReadonlySet<string>; readonly providers: ReadonlySet<string> };
  /** The redaction worker and redactor every journal write passes (issue 15). */
  readonly capture: CaptureParts;
  /** Application tools: the MCP bridge and the registry it reads, both set once the transport runs. */
  readonly tools: { bridge: ToolBridge | null; registry: EndpointRegistry | null };
  /** Memory limits (config `limits.turns`) for recall and the read tools (issue 30). */
  readonly memory: MemoryLimits;
  /** Brings a thread's consumer transcript store up to its committed seq (issue 31 point 4). */
  readonly transcripts: TranscriptAppender;
  /** The executor behind the engine: threads.delete closes a thread's session and erases the agent's files through it. */
  readonly executor: Executor;
  readonly cancelConfirmMs: number;
  /** Stops the sessions whose external MCP servers came from a gone `mcp` endpoint. */
  readonly revokeMcpSource: (source: string) => Promise<number>;
}

/**
 * Builds the engine from the `workspaces`/`providers`/`limits.turns` sections:
 * workspace aliases fail startup (P-ARC-18), then recovery runs before any
 * provider starts (P-STO-05, P-TRN-04). No providers configured: no engine.
 */
function startEngine(options: ServiceOptions, store: SqliteStore): Result<EngineParts | null> {
  const parsed = parseEngineConfig(options.sections ?? {});
  if (!parsed.ok) return parsed;
  const config = parsed.value;
  if (config.providers.length === 0 && config.workspaces.length === 0) return ok(null);
  const aliases = checkWorkspaceAliases(config.workspaces, realpathSync);
  if (!aliases.ok) return err({ code: aliases.code, retryable: false });
  const captured = createCapture(limitsEntry(options.sections, "capture"));
  if (!captured.ok) return err(controllerError("config_invalid", { where: captured.where }));
  const capture = captured.value;
  const tools: EngineParts["tools"] = { bridge: null, registry: null };
  const storage = storageSection(options.sections ?? {});
  if (!storage.ok) return storage;
  const hub = new ThreadEventHub(storage.value.eventTailBytes);
  const estore = engineStore(store, journalNotices(hub), capture.redactor, (record) => hub.tail.committed(record));
  const env: Record<string, string | undefined> = {};
  for (const name of new Set(["PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "TZ", "USER", "LOGNAME", "SHELL", ...config.providers.flatMap((p) => p.envAllowlist)])) {
    env[name] = options.env?.(name) ?? process.env[name];
  }
  // Each provider's `kind` picks its executor (ACP or native Codex), behind one port.
  const executors = providerExecutors(config.providers, {
    host: currentLaunchHost(),
    env,
    tmpRoot: tmpdir(),
    eraseRows: eraseThreadRows,
    // Each provider session of a thread gets its own bearer for that thread owner's tools.
    tools: (setup) => {
      const thread = setup.threadId === undefined ? undefined : store.threads.get(setup.threadId);
      if (tools.bridge === null || thread === undefined) return null;
      return tools.bridge.grant({ principal: thread.principal, application: thread.application, threadId: thread.threadId });
    },
    offered: (setup) => {
      const thread = setup.threadId === undefined ? undefined : store.threads.get(setup.threadId);
      return tools.bridge === null || thread === undefined ? [] : tools.bridge.offered({ principal: thread.principal, application: thread.application, threadId: thread.threadId });
    },
    // External MCP launch descriptions: only the endpoint ids are stored on the thread (P-PRV-07..10).
    mcp: applicationMcpResolver(() => tools.registry, (threadId) => {
      const t = store.threads.get(threadId);
      return t === undefined ? null : { principal: t.principal, application: t.application, restricted: t.restricted, mcpEndpoints: bindingOf(t).mcpEndpoints };
    }),
  });
  // Event text reaches the journal only after whole-block redaction (P-CAP-10).
  const executor = blockRedactingExecutor(executors, capture.redactor, capture.blockBytes);
  const transcripts = transcriptAppender(() => tools.registry, (threadId) => store.threads.get(threadId) ?? null,
    (threadId, afterSeq, limit) => store.journal.replay(threadId, afterSeq, limit).events, config.transcript, journalAppendProgress(store.journal));
  const vcs = new Map(config.providers.map((p) => [p.id, p.vcsIdentity]));
  const modes = new Map(config.providers.map((p) => [p.id, p.mode ?? null]));
  const turns = new TurnService({
    store: estore, executor, workspaces: aliases.roots, limits: config.limits, newId: randomUUID,
    vcsIdentity: (id) => vcs.get(id) ?? null, providerMode: (id) => modes.get(id) ?? null,
    // A thread's declared context sources, in its owner's scope; memory recall beside it, in the same window.
    // The owner's transcript store holds every committed entry before the turn may be dispatched.
    prepareTurn: withTranscriptAppend(withMemoryRecall(applicationContextPort(() => tools.registry, (threadId) => {
      const t = store.threads.get(threadId);
      return t === undefined ? null : { principal: t.principal, application: t.application, contextSources: bindingOf(t).contextSources };
    }, config.context), memoryRecall(() => tools.registry, (threadId) => {
      const t = store.threads.get(threadId);
      return t === undefined ? null : { ...t, memoryEndpoints: bindingOf(t).memoryEndpoints };
    }, config.memory), config.context.contextDeadlineMs), transcripts),
    // ...and, when the turn ends, holds the turn's own entries before its outcome is committed and seen.
    settleTurn: transcripts,
  });
  // Recovery now, before any external work; scheduling once tools and endpoints can be reached.
  turns.recover();
  return ok({ turns, hub, capture, tools, memory: config.memory, transcripts, executor, cancelConfirmMs: config.limits.cancelConfirmMs ?? LIFECYCLE_LIMITS.cancelWaitMsDefault, revokeMcpSource: (source) => executors.revokeMcpSource(source), known: { workspaces: new Set(aliases.roots.keys()), providers: new Set(vcs.keys()) } });
}

/** A step run after the store is open and validated; a failure stops startup. */
export type StartupStep = (store: SqliteStore) => Result<void> | Promise<Result<void>>;

/** How to start the service. */
export interface ServiceOptions {
  readonly databasePath: string;
  readonly retention: RetentionProfile;
  readonly clock?: Clock;
  readonly lockWaitMs?: number;
  /** Steps after validation, in order (recovery, executors, transport). */
  readonly startupSteps?: readonly StartupStep[];
  /** Config sections owned by later issues (`tokens`, `listen`, `limits` for the protocol). */
  readonly sections?: Readonly<Record<string, Json>>;
  /** Environment lookup for `env:` secret references. */
  readonly env?: (name: string) => string | undefined;
  /** Bootstrap credentials not from the config file (the managed child's stdin token, issue 16). */
  readonly bootstrapCredentials?: readonly BootstrapCredential[];
  /** The turn engine boundary (issue 14); without it turns.submit answers `turns_unavailable`. */
  readonly turns?: TurnPort;
}

/** Starts the WebSocket protocol when tokens or a listen address are configured (issue 13). */
async function startTransport(options: ServiceOptions, store: SqliteStore, engine: EngineParts | null, lifecycle: LifecyclePorts, applications: ReadonlyMap<string, ApplicationSettings>): Promise<Result<RunningProtocol | null>> {
  const config = protocolConfig(options.sections ?? {}, options.env ?? (() => undefined), options.bootstrapCredentials);
  if (!config.ok) return config;
  if (!config.value.enabled) return ok(null);
  const clock = options.clock ?? { now: () => Date.now() };
  const gate = { guard: lifecycle.guard, settings: applications, facts: lifecycle.usage, clock };
  return startProtocol({
    store,
    authStore: authSessionStore(store.handle),
    credentials: config.value.credentials,
    limits: config.value.limits,
    clock: options.clock ?? { now: () => Date.now() },
    // Payload-free lines only: event names, codes and counts.
    log: (event, fields) => void process.stderr.write(`${JSON.stringify({ event, ...fields })}\n`),
    turns: options.turns ?? (engine === null ? null : quotaTurnPort(engineTurnPort(engine.turns), gate)),
    extraMethods: { ...(engine === null ? {} : { ...turnMethods(engine.turns, turnGate(gate)), ...historyMethods(engine.turns.history()) }), ...lifecycleMethods(lifecycle) },
    ...(engine === null ? {} : { hub: engine.hub, known: engine.known }),
  });
}

/** A running service. */
export interface ControllerService {
  readonly store: SqliteStore;
  /** The readiness report: protocol and non-secret facts only. */
  readonly readiness: { readonly [key: string]: Json };
  /** Stops every part and releases the instance lock. */
  stop(): Promise<void>;
}

/** Starts the service, or answers the payload-free code of the first failure. */
export async function startService(options: ServiceOptions): Promise<Result<ControllerService, ControllerError>> {
  const storeOptions = {
    path: options.databasePath,
    retention: options.retention,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.lockWaitMs === undefined ? {} : { lockWaitMs: options.lockWaitMs }),
  };
  // Nothing is opened before the whole config passes (the same check doctor and status run).
  const checked = checkServiceConfig(options.sections ?? {}, options.env ?? (() => undefined), options.bootstrapCredentials);
  if (!checked.ok) return checked;
  // Config `limits.volatile` ({maxEntries, maxChars}); openSqliteStore caps it again.
  const volatile = volatileSection(options.sections ?? {});
  if (!volatile.ok) return volatile;
  const storage = storageSection(options.sections ?? {});
  if (!storage.ok) return storage;
  const opened = openSqliteStore({ ...storeOptions, groupCommit: storage.value.groupCommit, pageCacheKiB: storage.value.pageCacheKiB, ...(volatile.value === undefined ? {} : { volatile: volatile.value }) });
  if (!opened.ok) return opened;
  const store = opened.value;
  for (const step of options.startupSteps ?? []) {
    let result: Result<void>;
    try {
      result = await step(store);
    } catch (caught) {
      store.close();
      throw caught;
    }
    if (!result.ok) {
      store.close();
      return err(result.error);
    }
  }
  const engine = startEngine(options, store);
  if (!engine.ok) {
    store.close();
    return err(engine.error);
  }
  const applications = parseApplications(options.sections?.applications);
  if (!applications.ok) return applications;
  const parts0 = engine.value;
  const lifecycle = lifecycleParts(store.handle, options.clock ?? { now: () => Date.now() }, {
    cancelWaitMs: (parts0?.cancelConfirmMs ?? LIFECYCLE_LIMITS.cancelWaitMsDefault) + 5_000,
    cancelTurn: (turnId, actor) => void parts0?.turns.cancel(turnId, actor),
    forget: parts0 === null ? null : (s) => parts0.executor.forget?.(s) ?? Promise.resolve("unsupported"),
    deleted: (threadId) => parts0?.hub.published(threadId),
  });
  const transport = await startTransport(options, store, engine.value, lifecycle, applications.value);
  if (!transport.ok) {
    await engine.value?.turns.close();
    await engine.value?.capture.scanner.close();
    store.close();
    return err(transport.error);
  }
  const protocol = transport.value;
  const parts = engine.value;
  if (parts !== null && protocol !== null) {
    parts.tools.registry = protocol.endpoints;
    // A disconnect or dispose revokes an `mcp` endpoint at once: the agent sessions running its servers stop with them.
    protocol.endpoints.onRevoked((r) => { if (r.kind === "mcp") void parts.revokeMcpSource(mcpSourceKey(r, r.endpointId)); });
    const registry = parts.tools;
    const host = applicationToolHost(() => registry.registry, parts.capture.toolCallMs);
    // The memory read tools are composed beside the application's (issue 30).
    const memoryTools = memoryToolHost(() => registry.registry, (threadId) => store.threads.get(threadId) ?? null, parts.capture.redactor, parts.memory, parts.capture.toolCallMs);
    const tools = withMemoryTools(host, memoryTools);
    // A tool call reaches the application only after the agent's events before it are committed.
    parts.tools.bridge = await ToolBridge.start({
      list: tools.list,
      call: async (binding, tool, args) => {
        // Events that cannot be committed stop the call: only a code reaches the agent.
        try { store.handle.flush(); } catch { return { ok: false, code: "storage_write_failed" }; }
        // ...and only once the thread's consumer transcript store holds them.
        const appended = await parts.transcripts(binding.threadId);
        if (!appended.ok) return { ok: false, code: appended.code };
        return tools.call(binding, tool, args);
      },
    });
  }
  parts?.turns.engine.schedule();
  const stopRetention = startRetention(lifecycle.deletion, lifecycle.guard, applications.value, (code) => void process.stderr.write(`${JSON.stringify({ event: "retention.failed", code })}\n`));
  const pragmas = store.pragmas();
  return ok({
    store,
    readiness: {
      ready: true,
      protocol: PROTOCOL_VERSION,
      ...(protocol === null ? {} : { url: protocol.server.url }),
      storage: { journalMode: pragmas.journalMode, synchronous: pragmas.synchronous, schemaVersion: pragmas.schemaVersion },
      redaction: redactionFacts(),
    },
    stop: async () => {
      await stopRetention();
      await protocol?.close();
      await engine.value?.turns.close();
      await engine.value?.capture.scanner.close();
      await engine.value?.tools.bridge?.close();
      store.close();
    },
  });
}

/**
 * Non-secret facts for `status --json` (P-PRV-01, P-CAP-08): each provider's
 * launch source and package, resolved as serve would resolve it, never its
 * argv or environment; and the pinned detector table's version and digest.
 */
export function serviceDiagnostics(sections: Readonly<Record<string, Json>>): { [key: string]: Json } {
  const parsed = parseEngineConfig(sections);
  const host = currentLaunchHost();
  const providers: Json[] = parsed.ok ? parsed.value.providers.map((p) => {
    const r = resolveProviderLaunch(p, host);
    const launch: Json = r.ok ? { source: r.launch.source, packageName: r.launch.packageName, packageVersion: r.launch.packageVersion } : { error: r.code };
    return { id: p.id, kind: p.kind, ...(p.agent === undefined ? {} : { agent: p.agent }), launch };
  }) : [];
  return { providers, redaction: redactionFacts() };
}

/** The agent-file eraser of `threads delete` with the service stopped (no process is started). */
export function offlineForget(sections: Readonly<Record<string, Json>>, lookup: (name: string) => string | undefined): ((s: SessionForget) => Promise<ForgetResult>) | null {
  const parsed = parseEngineConfig(sections);
  return parsed.ok ? offlineForgetter(parsed.value.providers, (name) => lookup(name) ?? process.env[name], currentLaunchHost(), eraseThreadRows) : null;
}
