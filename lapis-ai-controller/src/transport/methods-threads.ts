// threads.* methods: reserve, create, configure, attach, snapshot, replay.
// Frames are parsed here; the rules (binding defaults and immutability,
// versions, busy, idempotency) are domain/thread-commands.ts.
import { checkPlacement, checkThread } from "../auth/access.ts";
import { ok } from "../domain/errors.ts";
import type { AccessContext, Outcome } from "../domain/protocol-ports.ts";
import { fail } from "../domain/protocol-ports.ts";
import type { ThreadRecord } from "../domain/records.ts";
import { checkAttach, configureThread, createThread, type BindingInput, type ThreadCommandDeps, type ThreadConfigInput } from "../domain/thread-commands.ts";
import { buildSnapshot, replayPage } from "./client-snapshot.ts";
import type { Conn, Handler, ProtocolDeps } from "./context.ts";
import { commandReply } from "./idempotent.ts";
import { Params } from "./params.ts";

const BINDING_KEYS = ["applicationRef", "contextSources", "toolEndpoints", "restricted", "retention"];
const CONFIG_KEYS = ["approvalPolicy", "title"];
const MAX_LIST = 64;

/** Parses a binding; omitted fields stay omitted (the domain gives them their defaults). */
function readBinding(p: Params | undefined): BindingInput | undefined {
  if (p === undefined) return undefined;
  return {
    applicationRef: p.optionalId("applicationRef"),
    contextSources: p.optionalIds("contextSources", MAX_LIST),
    toolEndpoints: p.optionalIds("toolEndpoints", MAX_LIST),
    restricted: p.optionalBoolean("restricted"),
    retention: p.optionalEnum("retention", ["full", "metadata-only"] as const),
  };
}

/** Parses a thread configuration; omitted fields stay omitted. */
function readConfig(p: Params | undefined): ThreadConfigInput | undefined {
  if (p === undefined) return undefined;
  return { approvalPolicy: p.optionalEnum("approvalPolicy", ["ask", "allow-all"] as const), title: p.optionalString("title", 200) };
}

/** The domain's view of the protocol deps for thread commands. */
export function threadDeps(deps: ProtocolDeps): ThreadCommandDeps {
  return {
    store: deps.store, clock: deps.clock, newId: deps.newId, reservations: deps.reservations, hub: deps.hub,
    isBusy: (threadId) => deps.turns?.isBusy(threadId) === true, defaultRetention: deps.store.retention,
  };
}

/** Loads a thread the caller may see; any other reads as `not_found`. */
export function loadThread(deps: ProtocolDeps, access: AccessContext, threadId: string): Outcome<ThreadRecord> {
  return checkThread(access, deps.store.threads.get(threadId));
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
  const threadId = p.optionalId("threadId");
  const workspaceId = p.id("workspace");
  const provider = p.id("provider");
  const config = readConfig(p.optionalObject("config", CONFIG_KEYS));
  const binding = readBinding(p.optionalObject("binding", BINDING_KEYS));
  const placement = checkPlacement(access, workspaceId, provider, deps.known);
  if (!placement.ok) return placement;
  const accepted = createThread(threadDeps(deps), access, { commandId, threadId, workspaceId, provider, config, binding });
  if (accepted.ok) conn.attachments.set(String(accepted.value.record.receipt.threadId), "attached");
  return commandReply(deps, "threads.create", accepted);
};

const configure: Handler = (deps, _conn, access, raw) => {
  const p = new Params(raw, ["commandId", "threadId", "expectedVersion", "config"]);
  const commandId = p.id("commandId");
  const threadId = p.id("threadId");
  const expectedVersion = p.optionalInt("expectedVersion", 1, Number.MAX_SAFE_INTEGER);
  if (expectedVersion === undefined) return fail("invalid_params");
  const config = readConfig(p.optionalObject("config", CONFIG_KEYS));
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  return commandReply(deps, "threads.configure", configureThread(threadDeps(deps), access, loaded.value, { commandId, threadId, expectedVersion, config }));
};

const attach: Handler = (deps, conn, access, raw) => {
  const p = new Params(raw, ["threadId", "binding"]);
  const threadId = p.id("threadId");
  const binding = readBinding(p.optionalObject("binding", BINDING_KEYS));
  const loaded = loadThread(deps, access, threadId);
  if (!loaded.ok) return loaded;
  if (!checkAttach(loaded.value, binding, deps.store.retention).ok) {
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
