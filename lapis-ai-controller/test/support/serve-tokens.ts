// The tokens black-box tests configure, with a canary marker so any leak of
// their bytes into output, files or argv is found by a plain search.
import { INITIAL_SCOPES } from "../../src/auth/scopes.ts";
import type { ServeToken } from "./serve-process.ts";

/** Every token value starts with this marker. */
export const CANARY = "CANARYtok";

function token(id: string, envName: string, grant: Partial<ServeToken> = {}): ServeToken {
  return { id, envName, value: `${CANARY}-${id}-7f3a9c21d4e8b605`, ...grant };
}

/** Two apps of alice, one app of bob, a threads:read session, and one session per missing scope. */
export const SERVE_TOKENS: readonly ServeToken[] = [
  token("app-a", "AIC_T_APP_A", { principal: "alice", application: "notes" }),
  token("app-b", "AIC_T_APP_B", { principal: "alice", application: "chat" }),
  token("bob", "AIC_T_BOB", { principal: "bob", application: "notes" }),
  token("reader", "AIC_T_READER", { principal: "alice", application: "notes", scopes: ["threads:read"] }),
  token("owner", "AIC_T_OWNER"),
  token("ws-narrow", "AIC_T_WS_NARROW", { principal: "alice", application: "notes", workspaces: ["ws-1"] }),
  ...INITIAL_SCOPES.map((scope) => token(`no-${scope.replace(":", "-")}`, `AIC_T_NO_${scope.replace(":", "_").toUpperCase()}`, {
    principal: "alice",
    application: "notes",
    scopes: INITIAL_SCOPES.filter((s) => s !== scope),
  })),
];

/** The value of a configured token by id. */
export function tokenValue(id: string): string {
  const found = SERVE_TOKENS.find((t) => t.id === id);
  if (found === undefined) throw new Error(`no token ${id}`);
  return found.value;
}
