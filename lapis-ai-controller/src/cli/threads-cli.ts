// `lapis-ai-controller threads delete <thread> [--cancel-active]` and
// `lapis-ai-controller usage [--since MS]`: the operator's lifecycle commands.
// A delete works like the protocol's threads.delete under the owner's
// authority (any principal's thread, audited as `owner/owner`): while a
// service holds the instance lock it calls that service; with the service
// stopped it opens the database (lock, validation) and deletes there, the
// agent's own files erased through the composition root's `forget`. Usage
// prints the reported token totals per application from a read-only
// connection (a running service does not stop it). Only codes and figures are
// printed; token bytes never.
import { randomUUID } from "node:crypto";
import type { ForgetResult, SessionForget } from "../domain/executor-port.ts";
import { OWNER_APPLICATION } from "../domain/protocol-ports.ts";
import { deleteThread } from "../domain/thread-lifecycle.ts";
import type { UsageTotals } from "../domain/token-usage.ts";
import { lifecycleParts } from "../persistence/lifecycle-parts.ts";
import { openSqliteStore } from "../persistence/sqlite-store.ts";
import { readUsageByApplication } from "../persistence/usage-store.ts";
import { CliError, cliErrorOf, EXIT, exitClassOf, type ExitClass } from "./errors.ts";
import { clientFailure, connectOwner, type ServiceAccess } from "./turns-resolve.ts";

/** Erases a thread's agent files with no service running (service.ts builds it from the config). */
export type OfflineForget = (s: SessionForget) => Promise<ForgetResult>;

const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const OWNER = { principal: OWNER_APPLICATION, application: OWNER_APPLICATION };
const REQUEST_ERRORS: ReadonlySet<string> = new Set(["not_found", "turn_active", "turn_fenced", "thread_busy"]);

/** Checks `threads delete`'s positional thread id (usage error otherwise). */
export function threadArg(rest: readonly string[] | undefined): string {
  const id = rest?.[0];
  if (id === undefined || rest?.length !== 1 || !ID.test(id)) throw new CliError("usage_invalid", EXIT.usage);
  return id;
}

/** Deletes a thread through the running service, or in the stopped service's database; prints the receipt (one JSON line). */
export async function runThreadsDelete(threadId: string, cancelActive: boolean, databasePath: string, access: ServiceAccess, forget: OfflineForget | null, writeOut: (s: string) => void): Promise<ExitClass> {
  const opened = openSqliteStore({ path: databasePath });
  if (!opened.ok && opened.error.code === "instance_locked") {
    const client = await connectOwner(access);
    try {
      const receipt = await client.threads.delete(threadId, { cancelActive });
      writeOut(`${JSON.stringify(receipt)}\n`);
      return EXIT.ok;
    } catch (caught) {
      throw clientFailure(caught);
    } finally {
      client.close();
    }
  }
  if (!opened.ok) throw new CliError(opened.error.code, exitClassOf(opened.error.code));
  const store = opened.value;
  try {
    const thread = store.threads.get(threadId);
    const ports = lifecycleParts(store.handle, store.handle.clock, { cancelWaitMs: 0, cancelTurn: () => {}, forget });
    const owner = thread === undefined ? undefined : { principal: thread.principal, application: thread.application };
    const r = await deleteThread(ports.deletion, ports.guard, OWNER, { commandId: `cli-${randomUUID()}`, threadId, cancelActive, owner }, thread !== undefined);
    if (!r.ok) throw new CliError(r.error.code, REQUEST_ERRORS.has(r.error.code) ? EXIT.usage : exitClassOf(r.error.code));
    writeOut(`${JSON.stringify(r.value.record.receipt)}\n`);
    return EXIT.ok;
  } finally {
    store.close();
  }
}

function line(application: string, t: UsageTotals): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const unreported = t.unreportedTurns > 0 ? `; ${t.unreportedTurns} unreported` : "";
  return `${application}  ${n(t.totalTokens)} tokens  (${n(t.inputTokens)} in, ${n(t.cachedInputTokens)} cached; ${n(t.outputTokens)} out, ${n(t.reasoningOutputTokens)} reasoning)  over ${t.reportedTurns} reported turn${t.reportedTurns === 1 ? "" : "s"}${unreported}\n`;
}

/** Prints the reported usage totals per application (turns created at or after `since`, ms). */
export function runUsage(databasePath: string, since: string | undefined, json: boolean, writeOut: (s: string) => void): ExitClass {
  const from = since === undefined ? 0 : Number(since);
  if (!Number.isSafeInteger(from) || from < 0) throw new CliError("usage_invalid", EXIT.usage);
  const read = readUsageByApplication(databasePath, from);
  if (!read.ok) throw cliErrorOf(read.error);
  if (json) writeOut(`${JSON.stringify({ since: from, applications: read.value })}\n`);
  else if (read.value.length === 0) writeOut("no turns\n");
  else for (const a of read.value) writeOut(line(a.application, a.totals));
  return EXIT.ok;
}
