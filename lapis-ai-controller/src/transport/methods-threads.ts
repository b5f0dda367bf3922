// threads.* methods: reserve, create, configure, attach, snapshot, replay.
import { checkPlacement, checkThread } from "../auth/access.ts";
import { ControllerFailure, ok } from "../domain/errors.ts";
import type { AccessContext, Outcome, ThreadBinding } from "../domain/protocol-ports.ts";
import { bindingOf, fail } from "../domain/protocol-ports.ts";
import type { ThreadRecord } from "../domain/records.ts";
import { buildSnapshot, replayPage } from "./client-snapshot.ts";
import type { Conn, Handler, ProtocolDeps } from "./context.ts";
import { runCommand } from "./idempotent.ts";
import { Params } from "./params.ts";

const BINDING_KEYS = ["applicationRef", "contextSources", "toolEndpoints", "restricted", "retention"];
const CONFIG_KEYS = ["approvalPolicy", "title"];
const MAX_LIST = 64;

/** Reads a binding; omitted fields take their defaults, lists are sorted sets. */
export function readBinding(p: Params | undefined): ThreadBinding {
  return {
    applicationRef: p?.optionalId("applicationRef") ?? null,
    contextSources: p?.optionalIds("contextSources", MAX_LIST) ?? [],
    toolEndpoints: p?.optionalIds("toolEndpoints", MAX_LIST) ?? [],
    restricted: p?.optionalBoolean("restricted") ?? false,
    retention: p?.optionalEnum("retention", ["full", "metadata-only"] as const) ?? "full",
  };
}

/** Field-by-field binding equality (reattachment, P-API-15). */
export function bindingsEqual(a: ThreadBinding, b: ThreadBinding): boolean {
  const sameList = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i]);
  return a.applicationRef === b.applicationRef && a.restricted === b.restricted && a.retention === b.retention &&
    sameList(a.contextSources, b.contextSources) && sameList(a.toolEndpoints, b.toolEndpoints);
}

/** Loads a thread the caller may see; any other reads as `not_found`. */
export function loadThread(deps: ProtocolDeps, access: AccessContext, threadId: string): Outcome<ThreadRecord> {
  return checkThread(access, deps.store.threads.get(threadId));
}

function appendEvent(deps: ProtocolDeps, threadId: string, kind: string, configVersion: number): void {
  const appended = deps.store.journal.append({
    threadId,
    turnId: null,
    visibility: "transcript",
    kind,
    metadata: { configVersion },
    createdAt: deps.clock.now(),
  });
  if (!appended.ok) throw new ControllerFailure(appended.error);
}

function published(deps: ProtocolDeps, threadId: string): void {
  deps.hub.published(threadId, deps.store.journal.lastSeq(threadId));
}

const reserve: Handler = (deps, _conn, access, raw) => {
  // No params: any key is refused like on every other method (D4).
  new Params(raw, []);
  const threadId = deps.newId();
  // Volatile: nothing durable happens, so a lost reply costs one unused id.
  if (!deps.reservations.add(threadId, access.principal, access.application, deps.clock.now())) return fail("reservation_limit", true);
  return ok({ result: { threadId } });
};

const create: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["commandId", "threadId", "workspace", "provider", "binding", "config"]);
  const commandId = p.id("commandId");
  const reserved = p.optionalId("threadId");
  const workspaceId = p.id("workspace");
  const provider = p.id("provider");
  const c = p.optionalObject("config", CONFIG_KEYS);
  const config = {
    approvalPolicy: c?.optionalEnum("approvalPolicy", ["ask", "allow-all"] as const) ?? "ask",
    title: c?.optionalString("title", 200) ?? null,
  };
  const binding = readBinding(p.optionalObject("binding", BINDING_KEYS));
  const placement = checkPlacement(access, workspaceId, provider, deps.known);
  if (!placement.ok) return placement;
  const input = { threadId: reserved ?? null, workspaceId, provider, config, binding };
  let threadId = "";
  const result = runCommand(deps, access, "threads.create", commandId, input, () => {
    const now = deps.clock.now();
    if (reserved !== undefined) {
      if (deps.reservations.get(reserved, access.principal, access.application, now) === undefined) return fail("not_found");
      if (deps.store.threads.get(reserved) !== undefined) return fail("thread_exists");
    }
    threadId = reserved ?? deps.newId();
    // Principal and application are stamped from the session, never from params (AIC-API-004a).
    const inserted = deps.store.threads.insert({
      threadId,
      principal: access.principal,
      application: access.application,
      workspaceId,
      provider,
      retention: binding.retention,
      restricted: binding.restricted,
      configVersion: 1,
      config,
      binding: {
        applicationRef: binding.applicationRef,
        contextSources: [...binding.contextSources],
        toolEndpoints: [...binding.toolEndpoints],
      },
      createdAt: now,
      updatedAt: now,
    });
    if (!inserted.ok) return inserted;
    appendEvent(deps, threadId, "thread_created", 1);
    return ok({ commandId, threadId, configVersion: 1 });
  }, () => {
    deps.reservations.consume(threadId);
    published(deps, threadId);
  });
  if (result.ok) conn.attachments.set(String(JSON.parse(result.value.raw as string).threadId), "attached");
  return result;
};

const configure: Handler = (deps, _conn, access, raw) => {
  const p = new Params(raw, ["commandId", "threadId", "expectedVersion", "config"]);
  const commandId = p.id("commandId");
  const threadId = p.id("threadId");
  const expectedVersion = p.optionalInt("expectedVersion", 1, Number.MAX_SAFE_INTEGER);
  if (expectedVersion === undefined) return fail("invalid_params");
  const c = p.optionalObject("config", CONFIG_KEYS);
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  const current = loaded.value.config;
  const config = {
    approvalPolicy: c?.optionalEnum("approvalPolicy", ["ask", "allow-all"] as const) ?? current.approvalPolicy ?? "ask",
    // An explicit `title: null` (as snapshots return it) clears the title; an omitted one keeps it.
    title: c?.isNull("title") === true ? null : (c?.optionalString("title", 200) ?? current.title ?? null),
  };
  const input = { threadId, expectedVersion, config };
  return runCommand(deps, access, "threads.configure", commandId, input, () => {
    const thread = deps.store.threads.get(threadId) as ThreadRecord;
    if (thread.configVersion !== expectedVersion) return fail("version_conflict");
    // Configuration never changes under running work (P-TRN-27).
    if (deps.turns?.isBusy(threadId) === true) return fail("thread_busy", true);
    const updated = deps.store.threads.updateConfig(threadId, expectedVersion, config, deps.clock.now());
    if (!updated.ok) return updated;
    appendEvent(deps, threadId, "thread_configured", updated.value.configVersion);
    return ok({ commandId, threadId, configVersion: updated.value.configVersion });
  }, () => published(deps, threadId));
};

const attach: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["threadId", "binding"]);
  const threadId = p.id("threadId");
  const binding = readBinding(p.optionalObject("binding", BINDING_KEYS));
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  if (!bindingsEqual(binding, bindingOf(loaded.value))) {
    // The attachment stays refused: no further submit on it (P-API-15).
    conn.attachments.set(threadId, "mismatched");
    deps.log("thread.attach_refused", { code: "binding_mismatch" });
    return fail("binding_mismatch");
  }
  conn.attachments.set(threadId, "attached");
  const lastSeq = deps.store.journal.lastSeq(threadId);
  return ok({ result: { threadId, configVersion: loaded.value.configVersion, lastSeq } });
};

const snapshot: Handler = (deps, _conn, access, raw) => {
  const p = new Params(raw, ["threadId", "tailLimit"]);
  const threadId = p.id("threadId");
  const limit = Math.min(p.optionalInt("tailLimit", 1, 1000) ?? deps.limits.snapshotTailLimit, deps.limits.snapshotTailLimit);
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  return ok({ result: buildSnapshot(loaded.value, deps.store.journal, limit, deps.turns?.isBusy(threadId) ?? false) });
};

const replay: Handler = (deps, _conn, access, raw) => {
  const p = new Params(raw, ["threadId", "afterSeq", "limit"]);
  const threadId = p.id("threadId");
  const afterSeq = p.optionalInt("afterSeq", 0, Number.MAX_SAFE_INTEGER) ?? 0;
  const limit = Math.min(p.optionalInt("limit", 1, 5000) ?? deps.limits.replayPageLimit, deps.limits.replayPageLimit);
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  const page = replayPage(loaded.value, deps.store.journal, afterSeq, limit);
  return page.ok ? ok({ result: page.value }) : page;
};

/** The threads.* part of the dispatch table. */
export const THREAD_METHODS: Readonly<Record<string, Handler>> = {
  "threads.reserve": reserve,
  "threads.create": create,
  "threads.configure": configure,
  "threads.attach": attach,
  "threads.snapshot": snapshot,
  "threads.replay": replay,
};

/** Checks that the connection holds a matching attachment before a submit. */
export function requireAttachment(conn: Conn, threadId: string): Outcome<void> {
  const state = conn.attachments.get(threadId);
  if (state === "mismatched") return fail("binding_mismatch");
  if (state === undefined) return fail("attachment_required");
  return ok(undefined);
}
