// Opening the native session of a turn (issue 25 point 5): a thread's stored
// session is reopened with `session/resume` (no history replay) or
// `session/load`, whichever the agent advertised in `initialize`; an agent
// that offers neither, or refuses the stored id, gets a fresh `session/new`
// and the result says so, so the engine records `context_reset` instead of
// starting over silently.
import * as acp from "@agentclientprotocol/sdk";
import type { ContextResetReason, SessionContinuity } from "../domain/executor-port.ts";
import type { AdvertisedModes } from "./acp-modes.ts";

/** What the agent said it can do with an existing session. */
export type ReopenCapabilities = { resume: boolean; load: boolean };

/** Reads the reopen capabilities from an initialize answer. */
export function reopenCapabilities(init: acp.InitializeResponse): ReopenCapabilities {
  const caps = init.agentCapabilities;
  return { resume: caps?.sessionCapabilities?.resume !== undefined && caps.sessionCapabilities.resume !== null, load: caps?.loadSession === true };
}

/** What to open: nothing stored, a stored id to reopen, or a reset already decided by the executor. */
export type OpenPlan = { kind: "new" } | { kind: "reopen"; nativeSessionId: string } | { kind: "reset"; reason: ContextResetReason };

/** The opened session: its id, its advertised modes, and its continuity with the stored one. */
export type Opened = { sessionId: string; modes: AdvertisedModes; continuity: SessionContinuity };

/** Opens the session per the plan; a refused reopen falls back to a fresh session (reset `resume_failed`). */
export async function openSession(
  conn: acp.ClientConnection,
  caps: ReopenCapabilities,
  plan: OpenPlan,
  cwd: string,
  mcpServers: acp.McpServer[],
): Promise<Opened> {
  const fresh = async (continuity: SessionContinuity): Promise<Opened> => {
    const created = await conn.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
    return { sessionId: created.sessionId, modes: created.modes as AdvertisedModes, continuity };
  };
  if (plan.kind === "new") return fresh({ kind: "new" });
  if (plan.kind === "reset") return fresh(plan);
  if (!caps.resume && !caps.load) return fresh({ kind: "reset", reason: "resume_unsupported" });
  const sessionId = plan.nativeSessionId;
  try {
    if (caps.resume) {
      const r = await conn.agent.request(acp.methods.agent.session.resume, { sessionId, cwd, mcpServers });
      return { sessionId, modes: r.modes as AdvertisedModes, continuity: { kind: "resumed", method: "session/resume" } };
    }
    // session/load replays history as session/update before answering; the
    // session has no turn sink yet, so the replay is dropped, never journaled.
    const r = await conn.agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers });
    return { sessionId, modes: (r?.modes ?? null) as AdvertisedModes, continuity: { kind: "resumed", method: "session/load" } };
  } catch (e) {
    // The agent refused the stored id (gone, unknown): a fresh session, recorded as a reset.
    if (e instanceof acp.RequestError) return fresh({ kind: "reset", reason: "resume_failed" });
    throw e;
  }
}
