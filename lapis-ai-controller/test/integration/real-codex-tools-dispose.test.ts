// What the model is offered after an endpoint is disposed, with the real
// agent on both executors (only the model is scripted): Codex reads the tool
// list once per session, so a session whose offered tools changed is
// replaced (and resumed) at the next turn; the model's next request no
// longer carries the disposed tools, the application's or the memory ones.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ControllerClient } from "../../src/client.ts";
import { startAgentServe } from "../support/agent-serve.ts";
import { FAKE_KEY_ENV } from "../support/codex-home.ts";
import { waitTurn } from "../support/engine-serve.ts";
import { tool } from "../support/tool-spec.ts";

const offered = (request: Record<string, unknown> | undefined) => JSON.stringify(request?.tools ?? []);

async function run(c: ControllerClient, threadId: string, text: string): Promise<void> {
  const turnId = String((await c.submitTurn(threadId, { text })).turnId);
  assert.equal((await waitTurn(c, turnId, ["completed", "failed"], 90_000)).state, "completed");
}

for (const executor of ["acp", "native"] as const) {
  test(`P-ARC-28 after dispose the model is no longer offered the endpoint's tools (${executor})`, { timeout: 300_000 }, async (t) => {
    const sections = executor === "native" ? { providers: { codex: { kind: "codex-app-server", envAllowlist: ["CODEX_HOME", FAKE_KEY_ENV], setupTimeoutMs: 60_000, killGraceMs: 3_000 } } } : {};
    const serve = await startAgentServe(t, [], sections);
    const c = await serve.client();
    t.after(() => c.close());
    const threadId = String((await c.createThread({ workspace: "ws", provider: "codex" })).threadId);
    await c.registerEndpoint({ endpointId: "notes", kind: "tools", threadId, tools: { note_write: tool(() => "saved", "Writes one note.") } });
    await c.registerEndpoint({ endpointId: "mem", kind: "memory", threadId, memory: { recall: () => [], search: () => [] } });
    serve.model.push({ text: ["first"] });
    await run(c, threadId, "one");
    const first = offered(serve.model.requests.at(-1));
    assert.match(first, /note_write/);
    assert.match(first, /memory_search/);
    await c.call("endpoints.dispose", { endpointId: "notes" });
    await c.call("endpoints.dispose", { endpointId: "mem" });
    serve.model.push({ text: ["second"] });
    await run(c, threadId, "two");
    const second = offered(serve.model.requests.at(-1));
    assert.doesNotMatch(second, /note_write/);
    assert.doesNotMatch(second, /memory_search|memory_read/);
  });
}
