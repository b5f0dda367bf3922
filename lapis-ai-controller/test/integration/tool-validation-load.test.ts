// A tool call must not stall the service (issue 32 point 5), black-box
// against `serve` with the scripted ACP agent: one application registers the
// costliest tool schemas the subset still allows and its agent keeps calling
// them with arguments at the bridge's 1 MiB body limit, each valid until its
// last item; meanwhile another application's turns run and complete within
// the usual wait deadline. A 200k-deep `default` is refused invalid_params.
// Times are the bench's business (bench/rows/validation.ts), not this test's.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PROTOCOL } from "../../src/transport/frames.ts";
import { ENGINE_TOKENS, engineServe, waitTurn } from "../support/engine-serve.ts";
import { errorCode, RawClient, resultOf } from "../support/raw-client.ts";
import { scriptedAgent } from "../support/scripted-agent-fixture.ts";
import type { McpLoop } from "../support/scripted-acp-agent.ts";
import { tempDir } from "../support/temp.ts";
import { tool } from "../support/tool-spec.ts";
import { WORST_ARGUMENT_BYTES, worstCases } from "../support/worst-schemas.ts";

async function until(fn: () => boolean, what: string, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test("AIC-TOOL-05 AIC-TOOL-03 worst allowed schemas at the 1 MiB body limit leave another application's turns flowing", async (t) => {
  const dir = tempDir(t, "aic-toolload-");
  const cases = worstCases();
  const stopFile = join(dir, "stop");
  const heavy = cases.map((c) => ({ tool: c.name, args: c.failing }));
  const light = cases.map((c) => ({ tool: c.name, args: c.passing }));
  const loop: McpLoop = { calls: [...light, ...heavy], untilFile: stopFile, maxRounds: 200 };
  const agent = scriptedAgent({ byPrompt: { LOAD: [{ mcpLoop: loop }, { say: "loaded" }] }, steps: [{ say: "ok", messageId: "m1" }] }, "scripted", dir);
  const serve = engineServe(t, dir, [agent.provider], 2);
  await serve.start();
  const alice = await serve.client("alice");
  const carol = await serve.client("carol");
  t.after(() => { alice.close(); carol.close(); });

  for (const c of cases) {
    assert.ok(JSON.stringify(c.failing).length <= WORST_ARGUMENT_BYTES && JSON.stringify(c.failing).length > WORST_ARGUMENT_BYTES * 0.9, c.name);
  }
  const served: string[] = [];
  await alice.registerEndpoint({
    endpointId: "worst", kind: "tools",
    tools: Object.fromEntries(cases.map((c) => [c.name, tool(() => { served.push(c.name); return `ok-${c.name}`; }, c.description, c.schema)])),
    readOnly: cases.map((c) => c.name),
  });

  // The deep document is sent as raw text: no serializer on the way may walk it.
  const raw = await RawClient.open(serve.url);
  t.after(() => raw.close());
  const aliceToken = ENGINE_TOKENS.find((tk) => tk.id === "alice")?.value as string;
  resultOf(await raw.request("hello", { protocol: PROTOCOL, credential: { type: "token", token: aliceToken } }));
  const depth = 200_000;
  const deep = `${"[".repeat(depth)}1${"]".repeat(depth)}`;
  raw.sendText(`{"jsonrpc":"2.0","id":"deep","method":"endpoints.register","params":{"endpointId":"deep","kind":"tools","tools":[{"name":"deep","description":"d","inputSchema":{"type":"object","default":${deep}}}]}}`);
  assert.equal(errorCode(await raw.reply("deep", 30_000)), "invalid_params");
  await until(() => serve.stderr().includes("json_too_deep"), "the refusal is logged with its rule", 10_000);

  const loadThread = String((await alice.createThread({ workspace: "ws-1", provider: "scripted", binding: { toolEndpoints: ["worst"] } })).threadId);
  const loadTurn = String((await alice.submitTurn(loadThread, { text: "LOAD" })).turnId);
  const results = () => agent.log().filter((e) => e.event === "mcp_result");
  await until(() => results().length >= loop.calls.length, "one full round of calls", 120_000);

  // Carol's application runs its turns while alice's agent keeps calling.
  const other = String((await carol.createThread({ workspace: "ws-2", provider: "scripted" })).threadId);
  const before = results().length;
  for (let i = 0; i < 3; i++) {
    const turnId = String((await carol.submitTurn(other, { text: `hello ${i}` })).turnId);
    const view = await waitTurn(carol, turnId, ["completed", "failed"]);
    assert.equal(view.state, "completed");
  }
  const during = results().length - before;
  writeFileSync(stopFile, "");
  assert.equal((await waitTurn(alice, loadTurn, ["completed", "failed"], 120_000)).state, "completed");
  assert.ok(during >= 1, `alice's agent was calling during carol's turns (${during} calls)`);

  // Every answer is the right one: passing calls reach the application, failing ones name the refusing rule.
  const all = results();
  assert.ok(all.length >= loop.calls.length);
  for (const [i, r] of all.entries()) {
    const call = loop.calls[i % loop.calls.length] as McpLoop["calls"][number];
    const c = cases.find((x) => x.name === call.tool);
    const expected = i % loop.calls.length < light.length ? `ok-${call.tool}` : `invalid_params: ${c?.rule}`;
    assert.equal(r.text, expected, `${call.tool} call ${i}`);
  }
  assert.ok(cases.every((c) => served.includes(c.name)));
  assert.ok(!served.includes("deep"));
});
