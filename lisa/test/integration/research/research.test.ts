import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { PAGE_TITLE, ROUTES, startHostileWeb, type HostileWeb } from "../../support/hostile-web.ts";
import {
  ALICE, BOB, CAROL, createWorld, lisaReplies, ROOM1, ROOM2, ROOM3, startInProcess, until, waitForBaseline,
  type InProcessLisa, type World,
} from "../../support/lisa-harness.ts";
import { jsonAnswer, toolCallsReply, type RecordedRequest, type ScriptedResponse } from "../../support/scripted-llm.ts";

type Message = { role: string; content: string | null };

function messages(request: RecordedRequest): Message[] {
  return (request.body as { messages?: Message[] }).messages ?? [];
}

function toolResults(request: RecordedRequest): string[] {
  return messages(request).filter((m) => m.role === "tool").map((m) => m.content ?? "");
}

const INVENTED = "https://invented.example/never-fetched";

// One script for three journeys, chosen by the invoking text.
function research(web: HostileWeb): (request: RecordedRequest) => ScriptedResponse {
  const page = `${web.url}${ROUTES.page}`;
  return (request) => {
    const user = messages(request).find((m) => m.role === "user")?.content ?? "";
    const context = /invocation="true">\n([^\n]*)/.exec(user)?.[1] ?? "";
    const results = toolResults(request);
    const corrections = messages(request).filter((m) => m.role === "user").length - 1;
    if (context.includes("please research")) {
      if (results.length === 0) return toolCallsReply([{ name: "web_search", arguments: { query: "lisa page" } }]);
      if (results.length === 1) return toolCallsReply([{ name: "fetch_web_page", arguments: { url: page } }]);
      if (results.length === 2) {
        const artifact = /"artifact_id":\s*"([^"]+)"/.exec(results[1] ?? "")?.[1] ?? "none";
        return toolCallsReply([{ name: "html_to_markdown", arguments: { artifact_id: artifact } }]);
      }
      return jsonAnswer("Indeed, the page says what I summarised.", [page]);
    }
    if (context.includes("invent a source")) {
      if (results.length === 0) return toolCallsReply([{ name: "web_search", arguments: { query: "anything" } }]);
      return jsonAnswer(`Indeed, see the source (attempt ${corrections + 1}).`, [INVENTED]);
    }
    if (context.includes("broken link")) {
      if (results.length === 0) return toolCallsReply([{ name: "fetch_web_page", arguments: { url: `${web.url}${ROUTES.serverError}` } }]);
      return jsonAnswer("Indeed, that page would not load, so I answered from memory.");
    }
    return jsonAnswer("Indeed, a plain answer.");
  };
}

describe("research journeys with real Pandoc", () => {
  let world: World;
  let web: HostileWeb;
  let lisa: InProcessLisa;

  before(async () => {
    web = await startHostileWeb();
    world = await createWorld({ llmScript: (request) => research(web)(request), config: { web: { allowed_hosts: ["127.0.0.1"] } } });
    world.search.respondWith({ kind: "results", results: [{ url: `${web.url}${ROUTES.page}`, title: "Search title of the page", content: "A snippet." }] });
    lisa = startInProcess(world);
    await waitForBaseline(lisa.store);
  });
  after(async () => {
    await lisa.stop();
    await world.close();
    await web.close();
  });

  test("searching, fetching, converting and answering gives a rendered, registry-validated Sources section", async () => {
    world.hs.sendText(ROOM1, ALICE, "Lisa, please research this page");
    await until(() => lisaReplies(world, ROOM1).length === 1, 30_000, "research reply");
    const reply = lisaReplies(world, ROOM1)[0]!;
    const page = `${web.url}${ROUTES.page}`;
    const html = String(reply.content["formatted_body"]);
    const body = String(reply.content["body"]);
    assert.match(body, /Sources:/);
    assert.ok(body.includes(page));
    assert.ok(html.includes(`href="${page}"`), "the source is a real link");
    assert.ok(html.includes(PAGE_TITLE) || html.includes("Search title of the page"), "the source carries its title");
    const conversion = world.llm.requests.flatMap(toolResults).find((r) => r.includes("html_to_markdown")) ?? "";
    assert.match(conversion, /untrusted/i, "converted page text reaches the model as untrusted data");
  });

  test("an invented source URL is never sent: one correction, then the in-character fallback", async () => {
    const before = world.llm.requests.length;
    world.hs.sendText(ROOM2, BOB, "Lisa, invent a source please");
    await until(() => lisaReplies(world, ROOM2).length === 1, 30_000, "fallback reply");
    const reply = lisaReplies(world, ROOM2)[0]!;
    assert.ok(!JSON.stringify(reply.content).includes(INVENTED), "the invented URL is not in the room");
    assert.match(String(reply.content["body"]), /\[Error: sources_invalid\]/);
    const asked = world.llm.requests.slice(before).map((r) => JSON.stringify(messages(r)));
    assert.ok(asked.some((text) => /source/i.test(text) && text.includes(INVENTED)), "the model was asked to correct its sources");
  });

  test("a failed web request does not prevent the reply, and the next invocation is handled", async () => {
    world.hs.sendText(ROOM3, CAROL, "Lisa, follow this broken link");
    await until(() => lisaReplies(world, ROOM3).length === 1, 30_000, "reply after a failed fetch");
    const first = lisaReplies(world, ROOM3)[0]!;
    assert.match(String(first.content["body"]), /would not load/);
    assert.doesNotMatch(String(first.content["body"]), /Sources:/, "no source is claimed for a failed fetch");
    const failure = world.llm.requests.flatMap(toolResults).find((r) => r.includes("http_error")) ?? "";
    assert.match(failure, /"ok":\s*false/);
    world.hs.sendText(ROOM3, ALICE, "Lisa, anything else?");
    await until(() => lisaReplies(world, ROOM3).length === 2, 30_000, "the next reply");
    assert.match(String(lisaReplies(world, ROOM3)[1]!.content["body"]), /a plain answer/);
  });
});
