// Thread commands (P-API-14/15, P-TRN-09, P-TRN-27): the domain owns the rules
// and transport only parses frames into these inputs. A thread's binding gets
// its defaults here once, at creation, and never changes after (a reattach must
// match it exactly); its configuration changes only at the expected version and
// never under running work.
import { parseApprovalPolicy, type ApprovalPolicy } from "./approval-policy.ts";
import { runCommand, type Accepted, type Actor, type CommandDeps } from "./commands.ts";
import { ControllerFailure, controllerError, err, ok, type Result } from "./errors.ts";
import type { ThreadEventHub } from "./event-hub.ts";
import type { Store } from "./ports.ts";
import { bindingOf, type ThreadBinding } from "./protocol-ports.ts";
import type { RetentionProfile, ThreadRecord } from "./records.ts";
import type { ThreadReservations } from "./thread-reservations.ts";

/** A binding as a client sends it: any field may be left to its default. */
export interface BindingInput {
  readonly applicationRef?: string | null | undefined;
  readonly contextSources?: readonly string[] | undefined;
  readonly toolEndpoints?: readonly string[] | undefined;
  readonly mcpEndpoints?: readonly string[] | undefined;
  readonly memoryEndpoints?: readonly string[] | undefined;
  readonly restricted?: boolean | undefined;
  readonly retention?: RetentionProfile | undefined;
}

/** The changeable thread configuration as a client sends it. */
export interface ThreadConfigInput {
  readonly approvalPolicy?: ApprovalPolicy | undefined;
  readonly title?: string | null | undefined;
}

/** What thread commands need: the store, clock, ids, reservations, the event hub and the engine's busy view. */
export interface ThreadCommandDeps extends CommandDeps {
  readonly store: Pick<Store, "transact" | "threads" | "commands" | "journal">;
  readonly newId: () => string;
  readonly reservations: ThreadReservations;
  readonly hub: ThreadEventHub;
  /** True while the thread has running work (configuration then fails `thread_busy`). */
  readonly isBusy: (threadId: string) => boolean;
  /** The retention a thread gets when its binding does not choose one (config `retention`). */
  readonly defaultRetention: RetentionProfile;
}

/** The binding a thread is created with: omitted fields take their defaults, lists are sorted sets. */
export function bindingWithDefaults(input: BindingInput | undefined, defaultRetention: RetentionProfile): ThreadBinding {
  const set = (list: readonly string[] | undefined): readonly string[] => [...new Set(list ?? [])].sort();
  return {
    applicationRef: input?.applicationRef ?? null,
    contextSources: set(input?.contextSources),
    toolEndpoints: set(input?.toolEndpoints),
    mcpEndpoints: set(input?.mcpEndpoints),
    memoryEndpoints: set(input?.memoryEndpoints),
    restricted: input?.restricted ?? false,
    retention: input?.retention ?? defaultRetention,
  };
}

/** Field-by-field binding equality (reattachment, P-API-15). */
export function bindingsEqual(a: ThreadBinding, b: ThreadBinding): boolean {
  const sameList = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return a.applicationRef === b.applicationRef && a.restricted === b.restricted && a.retention === b.retention &&
    sameList(a.contextSources, b.contextSources) && sameList(a.toolEndpoints, b.toolEndpoints) && sameList(a.mcpEndpoints, b.mcpEndpoints) &&
    sameList(a.memoryEndpoints, b.memoryEndpoints);
}

/** The full configuration after applying `input` over `current` (policy defaults to `ask`, P-TRN-09). */
export function configWith(current: ThreadRecord["config"] | undefined, input: ThreadConfigInput | undefined): { approvalPolicy: ApprovalPolicy; title: string | null } {
  const policy = parseApprovalPolicy(input?.approvalPolicy ?? current?.approvalPolicy);
  const title = input?.title ?? current?.title;
  return { approvalPolicy: policy.ok ? policy.value : "ask", title: typeof title === "string" ? title : null };
}

function appendEvent(deps: ThreadCommandDeps, threadId: string, kind: string, configVersion: number): void {
  const appended = deps.store.journal.append({ threadId, turnId: null, visibility: "transcript", kind, metadata: { configVersion }, createdAt: deps.clock.now() });
  if (!appended.ok) throw new ControllerFailure(appended.error);
}

function published(deps: ThreadCommandDeps, threadId: string): void {
  deps.hub.published(threadId);
}

/** threads.create input; placement is already authorized by the caller. */
export interface NewThread {
  readonly commandId: string;
  /** A reserved id (threads.reserve), or none for a fresh one. */
  readonly threadId?: string | undefined;
  readonly workspaceId: string;
  readonly provider: string;
  readonly config?: ThreadConfigInput | undefined;
  readonly binding?: BindingInput | undefined;
}

/** threads.create: one thread per command identity, its binding fixed from here on. */
export function createThread(deps: ThreadCommandDeps, actor: Actor, input: NewThread): Result<Accepted> {
  const config = configWith(undefined, input.config);
  const binding = bindingWithDefaults(input.binding, deps.defaultRetention);
  // A restricted thread launches no external MCP server (P-PRV-08).
  if (binding.restricted && binding.mcpEndpoints.length > 0) return err(controllerError("mcp_restricted"));
  const reserved = input.threadId;
  const digestInput = { threadId: reserved ?? null, workspaceId: input.workspaceId, provider: input.provider, config, binding };
  let threadId = "";
  return runCommand(deps, actor, "threads.create", input.commandId, digestInput, () => {
    const now = deps.clock.now();
    if (reserved !== undefined) {
      if (deps.reservations.get(reserved, actor.principal, actor.application, now) === undefined) return err(controllerError("not_found"));
      if (deps.store.threads.get(reserved) !== undefined) return err(controllerError("thread_exists"));
    }
    threadId = reserved ?? deps.newId();
    // Principal and application are stamped from the session, never from params (AIC-API-004a).
    const inserted = deps.store.threads.insert({
      threadId, principal: actor.principal, application: actor.application, workspaceId: input.workspaceId, provider: input.provider,
      retention: binding.retention, restricted: binding.restricted, configVersion: 1, config,
      // mcpEndpoints only when set, so rows of threads without external MCP keep their shape.
      binding: {
        applicationRef: binding.applicationRef, contextSources: [...binding.contextSources], toolEndpoints: [...binding.toolEndpoints],
        ...(binding.mcpEndpoints.length > 0 ? { mcpEndpoints: [...binding.mcpEndpoints] } : {}),
        ...(binding.memoryEndpoints.length > 0 ? { memoryEndpoints: [...binding.memoryEndpoints] } : {}),
      },
      createdAt: now, updatedAt: now,
    });
    if (!inserted.ok) return inserted;
    appendEvent(deps, threadId, "thread_created", 1);
    return ok({ commandId: input.commandId, threadId, configVersion: 1 });
  }, () => {
    deps.reservations.consume(threadId);
    published(deps, threadId);
  });
}

/** threads.configure input. */
export interface ThreadConfigure {
  readonly commandId: string;
  readonly threadId: string;
  readonly expectedVersion: number;
  readonly config?: ThreadConfigInput | undefined;
}

/** threads.configure on a thread the caller may see: optimistic version, never under running work (P-TRN-27). */
export function configureThread(deps: ThreadCommandDeps, actor: Actor, thread: ThreadRecord, input: ThreadConfigure): Result<Accepted> {
  const config = configWith(thread.config, input.config);
  const { threadId, expectedVersion } = input;
  return runCommand(deps, actor, "threads.configure", input.commandId, { threadId, expectedVersion, config }, () => {
    const current = deps.store.threads.get(threadId);
    if (current === undefined) return err(controllerError("not_found"));
    if (current.configVersion !== expectedVersion) return err(controllerError("version_conflict"));
    // Configuration never changes under running work (P-TRN-27).
    if (deps.isBusy(threadId)) return err(controllerError("thread_busy", { retryable: true }));
    const updated = deps.store.threads.updateConfig(threadId, expectedVersion, config, deps.clock.now());
    if (!updated.ok) return updated;
    appendEvent(deps, threadId, "thread_configured", updated.value.configVersion);
    return ok({ commandId: input.commandId, threadId, configVersion: updated.value.configVersion });
  }, () => published(deps, threadId));
}

/** threads.attach: the binding a client states must equal the thread's, defaults included (P-API-15). */
export function checkAttach(thread: ThreadRecord, input: BindingInput | undefined, defaultRetention: RetentionProfile): Result<ThreadBinding> {
  const stored = bindingOf(thread);
  return bindingsEqual(bindingWithDefaults(input, defaultRetention), stored) ? ok(stored) : err(controllerError("binding_mismatch"));
}
