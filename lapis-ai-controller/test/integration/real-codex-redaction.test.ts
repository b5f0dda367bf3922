// Redaction with the real agent: canary credentials the scripted model emits
// (split across stream chunks), one in the user's prompt, and one inside a
// tool call identity; a provider error carrying a canary under metadata-only
// retention. P-CAP-09, P-CAP-10, P-ARC-08, P-CAP-08 (readiness), P-STO-08.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { startAgentServe } from "../support/agent-serve.ts";
import { readDb, waitTurn } from "../support/engine-serve.ts";

const alnum = (n: number) => randomBytes(n).toString("base64").replace(/[^A-Za-z0-9]/g, "").padEnd(n, "Q").slice(0, n);
// Canaries shaped like real credentials (no real service knows them).
const OPENAI = `sk-proj-CANARY${alnum(40)}`;
const AWS = `AKIA${alnum(16).toUpperCase().replace(/[^A-Z0-9]/g, "7")}`;
const GITHUB = `ghp_${alnum(36)}`;
const TOOL_ID = `ghp_${alnum(36)}`;

/** Splits a canary into pieces inside a sentence, so no single chunk holds it whole. */
function chunksAround(secret: string, cuts: number[]): string[] {
  const pieces: string[] = [];
  let at = 0;
  for (const c of cuts) { pieces.push(secret.slice(at, c)); at = c; }
  pieces.push(secret.slice(at));
  return [`the key is ${pieces[0]}`, ...pieces.slice(1, -1), `${pieces.at(-1)} and that is all`];
}

function fragments(secret: string, cuts: number[]): string[] {
  const out: string[] = [];
  let at = 0;
  for (const c of [...cuts, secret.length]) { if (c - at >= 5) out.push(secret.slice(at, c)); at = c; }
  return out;
}

function dbBytes(path: string): string {
  return [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString("latin1")).join("");
}

test("P-CAP-09 P-CAP-10 P-ARC-08 P-STO-08 canaries from the real agent appear only as markers in DB, journal and SDK events", { timeout: 180_000 }, async (t) => {
  const openaiCuts = [5, 17, 30];
  const awsCuts = [9];
  const serve = await startAgentServe(t, [
    { text: [...chunksAround(OPENAI, openaiCuts), " also ", ...chunksAround(AWS, awsCuts)] },
    { call: { name: "exec_command", arguments: { cmd: "echo observed" }, callId: TOOL_ID } },
    { text: ["tool done"] },
  ]);
  const readiness = JSON.parse(serve.stdout().split("\n")[0] ?? "{}") as { redaction?: { digest?: string } };
  assert.match(String(readiness.redaction?.digest), /^[0-9a-f]{64}$/, "readiness names the detector table digest");
  const c = await serve.client();
  const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
  const events: string[] = [];
  await c.subscribe(threadId, { event: (d) => { events.push(JSON.stringify(d.event)); } });
  const turn1 = String((await c.submitTurn(threadId, { text: `remember ${GITHUB} please` })).turnId);
  await waitTurn(c, turn1, ["completed"], 60_000);
  const turn2 = String((await c.submitTurn(threadId, { text: "run the observer" })).turnId);
  await waitTurn(c, turn2, ["completed"], 60_000);
  await new Promise((r) => setTimeout(r, 300));

  const raw = [OPENAI, AWS, GITHUB, TOOL_ID, ...fragments(OPENAI, openaiCuts), ...fragments(AWS, awsCuts)];
  const db = dbBytes(serve.databasePath);
  const sdk = events.join("\n");
  for (const s of raw) {
    assert.equal(db.includes(s), false, "no canary or canary fragment in the database or its WAL");
    assert.equal(sdk.includes(s), false, "no canary or canary fragment in SDK events");
  }
  const journal = readDb<{ kind: string; payload: string | null; metadata: string }>(serve.databasePath, "SELECT kind, payload, metadata FROM journal ORDER BY journal_id");
  const text = journal.map((r) => `${r.payload ?? ""}${r.metadata}`).join("\n");
  assert.match(text, /\[redacted:openai_api_key\]/);
  assert.match(text, /\[redacted:aws_access_key_id\]/);
  assert.match(text, /\[redacted:github_token\]/, "the prompt canary is redacted too");
  assert.match(sdk, /\[redacted:openai_api_key\]/);
  // The tool call whose identity held a canary became an omission, not a renamed tool call.
  const omissions = journal.filter((r) => r.kind === "omission").map((r) => JSON.parse(r.metadata) as Record<string, unknown>);
  assert.ok(omissions.some((o) => o.omittedKind === "tool_begin" && o.reason === "identity_redacted"), JSON.stringify(omissions));
  const tools = journal.filter((r) => r.kind === "tool_begin" || r.kind === "tool_end");
  assert.equal(tools.some((r) => `${r.payload ?? ""}${r.metadata}`.includes("[redacted:")), false, "no tool row with an altered identity");

  // P-STO-08: a real provider error (the model answers HTTP 400 with a canary) under metadata-only retention.
  const ERR_CANARY = `CANARYprovidererror${alnum(12)}`;
  serve.model.push({ fail: { status: 400, message: `refused: ${ERR_CANARY}` } });
  const meta = String((await c.createThread({ workspace: "ws", provider: "codex", binding: { retention: "metadata-only" } })).threadId);
  const turn3 = String((await c.submitTurn(meta, { text: "this will fail" })).turnId);
  const ended = await waitTurn(c, turn3, ["completed", "failed", "interrupted"], 60_000);
  assert.ok(ended.errorCode === null || /^[a-z][a-z0-9_]{0,63}$/.test(String(ended.errorCode)));
  const codes = readDb<{ error_code: string | null }>(serve.databasePath, "SELECT error_code FROM turns WHERE turn_id = ?", turn3);
  assert.ok(codes.every((r) => r.error_code === null || /^[a-z][a-z0-9_]{0,63}$/.test(r.error_code)));
  assert.equal(dbBytes(serve.databasePath).includes(ERR_CANARY), false, "no provider error text in the database or WAL");
});
