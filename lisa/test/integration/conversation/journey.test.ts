import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ALICE, BOB, CAROL, createWorld, LISA, lisaReplies, repliedTo, ROOM1, startInProcess, until, waitForBaseline,
  type InProcessLisa, type World,
} from "../../support/lisa-harness.ts";
import { jsonAnswer, type RecordedRequest } from "../../support/scripted-llm.ts";

const FIRST_ANSWER = [
  "I looked at what you said about blabla. Two things:",
  "",
  "1. It depends on **quux**.",
  "2. See [the manual](https://example.org/manual).",
  "",
  "```sh",
  "quux --enable",
  "```",
].join("\n");
const SECOND_ANSWER = "It does, but only when quux is enabled.\n\nSecond paragraph.";

function messagesOf(request: RecordedRequest | undefined): Array<{ role: string; content: string }> {
  return ((request?.body as { messages?: Array<{ role: string; content: string }> } | undefined)?.messages ?? []);
}

describe("the operator's user journey", () => {
  let world: World;
  let lisa: InProcessLisa;
  let invoking1 = "";
  let invoking2 = "";

  before(async () => {
    world = await createWorld({ llmScript: [jsonAnswer(FIRST_ANSWER), jsonAnswer(SECOND_ANSWER)] });
    lisa = startInProcess(world);
    await waitForBaseline(lisa.store);
    world.hs.sendText(ROOM1, ALICE, "bla bla");
    world.hs.send(ROOM1, BOB, {
      msgtype: "m.text", body: "bla bla bla `code`", format: "org.matrix.custom.html",
      formatted_body: "bla <strong>bla</strong> bla <code>code</code><script>alert(1)</script>",
    });
    invoking1 = world.hs.sendText(ROOM1, CAROL, "@Lisa What do you think?");
    await until(() => lisaReplies(world, ROOM1).length === 1, 15_000, "first reply");
    const first = lisaReplies(world, ROOM1)[0]!;
    invoking2 = world.hs.reply(ROOM1, ALICE, first.event_id, "Does that also apply to foobar?");
    await until(() => lisaReplies(world, ROOM1).length === 2, 15_000, "second reply");
  });
  after(async () => {
    await lisa.stop();
    await world.close();
  });

  test("produces exactly two replies, each a rich reply to its invoking message", () => {
    const replies = lisaReplies(world, ROOM1);
    assert.equal(replies.length, 2);
    assert.equal(repliedTo(replies[0]!), invoking1);
    assert.equal(repliedTo(replies[1]!), invoking2);
    assert.deepEqual((replies[1]!.content["m.mentions"] as { user_ids: string[] }).user_ids, [ALICE]);
  });

  test("the first request carries the context with authors, formatting and the invocation marked", () => {
    const user = messagesOf(world.llm.requests[0]).find((m) => m.role === "user")?.content ?? "";
    assert.match(user, /author_id="@alice:localhost" author_name="Alice"[^>]*>\nbla bla\n/);
    assert.match(user, /author_id="@bob:localhost" author_name="Bob"[^>]*>\nbla \*\*bla\*\* bla `code`\n/);
    assert.doesNotMatch(user, /alert\(1\)|<script/);
    assert.match(user, /author_id="@carol:localhost" author_name="Carol"[^>]*invocation="true"[^>]*>\n@Lisa What do you think\?/);
    console.log(`journey: first prompt ${messagesOf(world.llm.requests[0]).reduce((n, m) => n + m.content.length, 0)} characters`);
  });

  test("the second request carries Lisa's first answer and the reply relation", () => {
    const messages = messagesOf(world.llm.requests[1]);
    const user = messages.find((m) => m.role === "user")?.content ?? "";
    assert.match(user, new RegExp(`author_id="${LISA}"[^>]*>\\nI looked at what you said about blabla`));
    const lisaSequence = new RegExp(`<message sequence="(\\d+)"[^>]*author_id="${LISA}"`).exec(user)?.[1];
    assert.ok(lisaSequence !== undefined);
    assert.match(user, new RegExp(`Does that also apply to foobar\\?\\n<reply_to sequence="${lisaSequence}"`));
    assert.doesNotMatch(user, /> <@lisa:localhost>/, "the reply fallback quote is stripped");
    console.log(`journey: second prompt ${messages.reduce((n, m) => n + m.content.length, 0)} characters`);
  });

  test("the Matrix payloads render lists, code blocks, paragraphs and links", () => {
    const [first, second] = lisaReplies(world, ROOM1);
    const html = String(first!.content["formatted_body"]);
    assert.equal(first!.content["format"], "org.matrix.custom.html");
    assert.match(html, /<ol>\s*<li>It depends on <strong>quux<\/strong>\.<\/li>/);
    assert.match(html, /<a href="https:\/\/example\.org\/manual">the manual<\/a>/);
    assert.match(html, /<pre><code class="language-sh">quux --enable\n<\/code><\/pre>/);
    const body = String(first!.content["body"]);
    assert.match(body, /1\. It depends on quux\./);
    assert.match(body, /quux --enable/);
    assert.match(String(second!.content["formatted_body"]), /<p>It does, but only when quux is enabled\.<\/p>\s*<p>Second paragraph\.<\/p>/);
  });
});
