import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonAnswer, startScriptedLlm } from "../../support/scripted-llm.ts";

test("the scripted LLM lists its model at GET /v1/models and records only chat requests", async (t) => {
  const server = await startScriptedLlm([jsonAnswer("hi")], { model: "scripted-model" });
  t.after(() => server.close());
  const models = await fetch(`${server.url}/models`);
  assert.equal(models.status, 200);
  assert.deepEqual(((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id), ["scripted-model"]);
  const chat = await fetch(`${server.url}/chat/completions`, { method: "POST", body: JSON.stringify({ model: "scripted-model", messages: [] }) });
  assert.equal(chat.status, 200);
  await chat.arrayBuffer();
  const exhausted = await fetch(`${server.url}/chat/completions`, { method: "POST", body: "{}" });
  assert.equal(exhausted.status, 500, "an exhausted script answers 500");
  await exhausted.arrayBuffer();
  assert.equal(server.requests.length, 2);
  assert.deepEqual(server.requests[0]?.body, { model: "scripted-model", messages: [] });
});
