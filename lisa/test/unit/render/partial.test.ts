// Partial-text rules of streaming replies: what a member may see before the
// answer is final (only the answer's Markdown, no links, no mentions, no
// tool-call JSON or reasoning), and the partial and edit message contents.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { partialMarkdown } from "../../../src/llm/partial-answer.ts";
import { partialPreview, renderEdit, renderPartial } from "../../../src/render/index.ts";

const INVOKING = { eventId: "$q:example.org", roomId: "!r:example.org", sender: "@alice:example.org", body: "Lisa, what is new?" };

describe("LISA-STREAM-05: the answer's Markdown as far as it streamed", () => {
  test("only the markdown field of the JSON contract, decoded as far as complete escapes go", () => {
    assert.equal(partialMarkdown(""), null);
    assert.equal(partialMarkdown("{\"mark"), null);
    assert.equal(partialMarkdown("{\"markdown\": \""), "");
    assert.equal(partialMarkdown("{\"markdown\": \"Hello \\\"you\\\"\\nnext \\u00e9\\u"), "Hello \"you\"\nnext é");
    assert.equal(partialMarkdown("```json\n{\"markdown\":\"Fenced"), "Fenced");
    assert.equal(partialMarkdown("{\"source_urls\": [\"https://a.example/\"], \"markdown\": \"After"), "After");
    assert.equal(partialMarkdown("{\"markdown\":\"Done.\",\"source_urls\":[\"https://x.example/\"]}"), "Done.");
    assert.equal(partialMarkdown("{\"markdown\": \"emoji \\ud83d"), "emoji ");
    assert.equal(partialMarkdown("{\"markdown\": \"emoji \\ud83d\\ude00!"), "emoji 😀!");
    assert.equal(partialMarkdown("{\"markdown\": \"a\\\\b\\\"c\\\\"), "a\\b\"c\\", "escapes side by side");
    assert.equal(partialMarkdown("{\"markdown\": \"cut at \\"), "cut at ", "a lone backslash at the end waits");
    assert.equal(partialMarkdown("{\"markdown\": \"\\n\\t\", \"source_urls\": []}"), "\n\t");
  });

  test("tool calls as JSON or tags, prose, and reasoning never show", () => {
    assert.equal(partialMarkdown("{\"name\": \"web_search\", \"arguments\": {\"query\": \"x\"}}"), null);
    assert.equal(partialMarkdown("<tool_call>{\"name\": \"web_search\""), null);
    assert.equal(partialMarkdown("[TOOL_CALLS][{\"name\":\"web_search\""), null);
    assert.equal(partialMarkdown("Sure, here is the answer"), null);
    assert.equal(partialMarkdown("<think>{\"markdown\": \"secret plan"), null);
    assert.equal(partialMarkdown("<think>plan</think>{\"markdown\": \"Visible"), "Visible");
    // Templates that open the block themselves: reasoning, then a closer, then the answer.
    assert.equal(partialMarkdown("I should say hi {\"markdown\": \"no"), null);
    assert.equal(partialMarkdown("I should say hi</think>{\"markdown\": \"Hi"), "Hi");
  });
});

describe("LISA-STREAM-17: a prose answer (outside the JSON contract) as far as it streamed, when allowed", () => {
  test("prose grows; it stops at the first sign of structure; JSON, tags, fences and tool-call markers never start it", () => {
    assert.equal(partialMarkdown("Sure, here is the answer", true), "Sure, here is the answer");
    assert.equal(partialMarkdown("  \nThe sky is blue", true), "The sky is blue");
    assert.equal(partialMarkdown("Let me look.\n<tool_call>\n{\"name\": \"web_search\"", true), "Let me look.\n");
    assert.equal(partialMarkdown("Here it is: {\"markdown\": \"x", true), "Here it is: ");
    assert.equal(partialMarkdown("Done [TOOL_CALLS][{\"name\"", true), "Done ");
    assert.equal(partialMarkdown("As code: ```json\n{", true), "As code: ");
    assert.equal(partialMarkdown("{\"name\": \"web_search\"", true), null);
    assert.equal(partialMarkdown("<tool_call>{\"name\"", true), null);
    assert.equal(partialMarkdown("[TOOL_CALLS][", true), null);
    assert.equal(partialMarkdown("```\nplain", true), null);
    assert.equal(partialMarkdown("<think>plan", true), null, "open reasoning never shows");
    assert.equal(partialMarkdown("<think>plan</think>Answer in prose", true), "Answer in prose");
    // The contract still streams its markdown only.
    assert.equal(partialMarkdown("{\"markdown\": \"Hi", true), "Hi");
    // Not allowed (the default): prose waits for the final answer.
    assert.equal(partialMarkdown("Sure, here is the answer"), null);
  });
});

describe("LISA-STREAM-05, LISA-STREAM-06: partial preview rules", () => {
  test("links become their text; bare URLs, autolinks, e-mail and domain-like words are left out", () => {
    assert.equal(partialPreview("See [the docs](https://evil.example/x) and <https://a.example> now "), "See the docs and now");
    assert.equal(partialPreview("Visit https://evil.example/path or www.evil.example today "), "Visit or today");
    assert.equal(partialPreview("Mail bob@evil.example or read evil.example and node.js later "), "Mail or read and later");
    assert.equal(partialPreview("![image](https://x.example/i.png) shown "), "image shown");
    assert.equal(partialPreview("Ref [x][1] here\n\n[1]: https://x.example/\n\nend "), "Ref x here\n\nend");
  });

  test("no mentions or pills: user ids, room aliases and @room are left out", () => {
    assert.equal(partialPreview("Ask @bob:example.org in #room:example.org or @room please "), "Ask in or please");
    assert.equal(partialPreview("Ping [Bob](https://matrix.to/#/@bob:example.org) now "), "Ping Bob now");
  });

  test("only whole words; a link, tag or mention still being written is held back", () => {
    assert.equal(partialPreview("The answer is hal"), "The answer is");
    assert.equal(partialPreview("Read [the docs](https://exa"), "Read");
    assert.equal(partialPreview("Read [the do"), "Read");
    assert.equal(partialPreview("Ask @bo"), "Ask");
    assert.equal(partialPreview("Before <a href=\"https://x\""), "Before");
    assert.equal(partialPreview("Raw <b>bold</b> text "), "Raw bold text");
    assert.equal(partialPreview("When x < 5 the loop ends early "), "When x < 5 the loop ends early", "a comparison is prose");
    assert.equal(partialPreview(`[${"long note ".repeat(40)}and more `).startsWith("[long note"), true, "an old unclosed bracket is prose");
  });
});

describe("LISA-STREAM-06: partial and edit contents", () => {
  test("a partial is a rich reply mentioning only the invoker (as the final reply does), with the status line", () => {
    const content = renderPartial({ markdown: "Looking at [x](https://x.example) it is ", status: "reading example.org…", invoking: INVOKING, thread: null });
    assert.deepEqual(content["m.mentions"], { user_ids: ["@alice:example.org"] });
    assert.deepEqual(content["m.relates_to"], { "m.in_reply_to": { event_id: "$q:example.org" } });
    assert.ok(!String(content["formatted_body"]).includes("x.example"));
    assert.ok(String(content["formatted_body"]).includes("<code>reading example.org…</code>"));
    assert.ok(!/<a [^>]*x\.example/.test(String(content["formatted_body"])));
  });

  test("an edit replaces the content without its relation, mentions no one anew, and keeps a short plain fallback", () => {
    const final = { msgtype: "m.text", body: "> <@alice:example.org> q\n\nThe answer.", format: "org.matrix.custom.html", formatted_body: "<mx-reply>q</mx-reply><p>The answer.</p>", "m.relates_to": { "m.in_reply_to": { event_id: "$q" } }, "m.mentions": { user_ids: ["@alice:example.org"] }, "org.lisa.txn_id": "t" };
    const edit = renderEdit("$msg:example.org", final);
    assert.deepEqual(edit["m.relates_to"], { rel_type: "m.replace", event_id: "$msg:example.org" });
    assert.deepEqual(edit["m.mentions"], {});
    assert.equal(edit["body"], "* The answer.");
    assert.equal(edit["formatted_body"], "* <p>The answer.</p>");
    const { "m.relates_to": _r, ...rest } = final;
    assert.deepEqual(edit["m.new_content"], rest);
    const long = renderEdit("$m", { ...final, body: "x".repeat(5_000) });
    assert.ok(String(long["body"]).length <= 1_003 && long["formatted_body"] === undefined);
  });
});
