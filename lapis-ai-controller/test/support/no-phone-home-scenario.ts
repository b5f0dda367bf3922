// The scenario test/integration/no-phone-home.test.ts runs under strace: the
// Deno runtime (as serve and the bench run on it) starts the scripted
// Responses-API stand-in, writes the tests' CODEX_HOME and runs one turn on
// the real `codex app-server` and one on the real codex-acp, each of which
// lives longer than Codex's start-up work (its plugin sync ran within the
// first second of an app-server's life). Prints one JSON line.
import process from "node:process";
import { writeCodexHome } from "./codex-home.ts";
import { startDirectAgent } from "./direct-acp-client.ts";
import { startDirectAppServer } from "./direct-app-server-client.ts";
import { startScriptedResponsesApi } from "./scripted-responses-api.ts";

const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: no-phone-home-scenario.ts <dir>");
const model = await startScriptedResponsesApi([{ text: ["pong"] }, { text: ["pong"] }]);
try {
  const home = writeCodexHome(dir, model.baseUrl);
  const env = { PATH: process.env.PATH ?? "", ...home.env };
  const native = await startDirectAppServer({ env, cwd: home.workspace, timeoutMs: 60_000 });
  const nativeTurn = await native.turn("ping").finally(() => native.close());
  const acp = await startDirectAgent({ env, cwd: home.workspace, modeId: "read-only" });
  const acpTurn = await acp.prompt("ping").finally(() => acp.close());
  console.log(JSON.stringify({ native: nativeTurn.status, acp: acpTurn.stopReason, requests: model.requests.length }));
} finally {
  await model.close();
}
