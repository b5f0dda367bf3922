// The terminal chat as the demo person: each typed line is sent to the room
// (`@Lisa ...` mentions her, `/reply ...` replies to her last message), and
// the room's new messages and Lisa's typing are printed as they arrive.
// A streaming reply grows by edits while she types: each state is shown as
// "  … " progress, and her reply is printed once ("Lisa: ") when she stops
// typing, in its final form.
// Works on a terminal (readline, Ctrl-C / Ctrl-D end it) and on a pipe.
import { createInterface, type Interface } from "node:readline";
import { type MatrixTestClient, replyContent, textContent, withoutReplyFallback } from "../../test/support/synapse.ts";
import type { TimelineEvent } from "../../test/support/synapse/timeline.ts";
import { followRoom } from "./room-feed.ts";

/** The prompt the person types at. */
export const PROMPT = "you> ";
/** How Lisa's messages start on screen (the acceptance test counts them). */
export const LISA_PREFIX = "Lisa: ";

/** Commands of the chat, shown at start and by /help. */
export const CHAT_HELP = [
  "  @Lisa <question>   mention Lisa: she answers in a moment",
  "  /reply <text>      reply to Lisa's last message (she answers that too)",
  "  <anything else>    an ordinary message to the room (Lisa stays quiet)",
  "  /help              this list      /quit (or Ctrl-C, Ctrl-D)   stop everything",
].join("\n");

/** Who is in the chat. */
export interface ChatPeople {
  readonly roomId: string;
  readonly lisaUserId: string;
  readonly person: MatrixTestClient;
}

const MENTION = /^@lisa\b/i;

function indent(body: string, prefix: string): string {
  const pad = " ".repeat(prefix.length);
  return body.split("\n").map((line, index) => (index === 0 ? prefix : pad) + line).join("\n");
}

function localpart(userId: string): string {
  return userId.slice(1).split(":")[0] ?? userId;
}

/** Runs the chat until the person quits, stdin ends, or `external` aborts; resolves when it has ended. */
export async function runChat(people: ChatPeople, external: AbortSignal): Promise<void> {
  const { roomId, lisaUserId, person } = people;
  const terminal = process.stdin.isTTY === true;
  const rl: Interface = createInterface({ input: process.stdin, output: process.stdout, terminal, prompt: PROMPT });
  let lastLisa: TimelineEvent | undefined;
  let lisaTyping = false;
  // On a pipe the prompt is plain text: end its line before printing anything else.
  let promptPending = false;
  const prompt = (): void => {
    if (terminal) return rl.prompt(true);
    process.stdout.write(PROMPT);
    promptPending = true;
  };
  const show = (text: string): void => {
    if (terminal) process.stdout.write("\r\x1b[K");
    else if (promptPending) process.stdout.write("\n");
    promptPending = false;
    process.stdout.write(`${text}\n`);
    if (terminal) rl.prompt(true);
  };
  // Lisa's reply as far as it has arrived (a message, then its edits), printed when she stops typing.
  let draft: { event: TimelineEvent; body: string; reprint: boolean } | null = null;
  const flush = (): void => {
    if (draft === null || lisaTyping) return;
    lastLisa = draft.event;
    show(indent(draft.body, draft.reprint ? "Lisa (edited): " : LISA_PREFIX));
    draft = null;
  };
  const feed = followRoom(person, roomId, {
    message(event) {
      if (event.sender === person.userId) return;
      const relation = event.content["m.relates_to"] as Record<string, unknown> | undefined;
      const edit = relation?.["rel_type"] === "m.replace" ? event.content["m.new_content"] as Record<string, unknown> | undefined : undefined;
      const content = edit ?? event.content;
      // Clients strip a reply fallback; so does the chat.
      const body = typeof content["body"] === "string" ? withoutReplyFallback(content["body"]) : "";
      if (event.sender !== lisaUserId) return show(indent(body, `${localpart(event.sender)}: `));
      if (edit === undefined) draft = { event, body, reprint: false };
      else if (draft !== null) draft = { ...draft, body };
      else if (lastLisa !== undefined && relation?.["event_id"] === lastLisa.event_id) draft = { event: lastLisa, body, reprint: true };
      else return;
      if (lisaTyping) show(indent(body.slice(-200), "  … "));
    },
    typing(userIds) {
      const now = userIds.includes(lisaUserId);
      if (now && !lisaTyping) show("  ... Lisa is typing");
      lisaTyping = now;
    },
    batchEnd: flush,
    problem(text) {
      show(`  (cannot read the room: ${text}; retrying)`);
    },
  });
  const send = async (line: string): Promise<void> => {
    if (line.startsWith("/reply")) {
      const text = line.slice("/reply".length).trim();
      if (lastLisa === undefined) return show("  (Lisa has not said anything yet in this chat: mention her with @Lisa first)");
      if (text === "") return show("  (usage: /reply <text>)");
      await person.sendMessage(roomId, replyContent(roomId, lastLisa, text, { fallback: false }));
      return;
    }
    const mentions = MENTION.test(line) ? { user_ids: [lisaUserId] } : {};
    await person.sendMessage(roomId, textContent(line, { mentions }));
  };

  // Listening starts now, not after the first sync: lines typed (or piped) early are queued, not lost.
  let queue: Promise<void> = feed.ready;
  await new Promise<void>((resolve) => {
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      external.removeEventListener("abort", end);
      rl.close();
      resolve();
    };
    external.addEventListener("abort", end, { once: true });
    rl.on("SIGINT", end);
    rl.on("close", end);
    rl.on("line", (raw) => {
      const line = raw.trim();
      if (line === "/quit" || line === "/exit") return end();
      if (line === "/help") return show(CHAT_HELP);
      if (line === "") return prompt();
      // Sends go out in the order typed.
      queue = queue.then(() => send(line)).then(
        () => prompt(),
        (error: unknown) => show(`  (could not send: ${error instanceof Error ? error.message : String(error)})`),
      );
    });
    void feed.ready.then(() => {
      if (!ended) prompt();
    });
  });
  // What was typed before the end still goes out.
  await queue;
  if (promptPending) process.stdout.write("\n");
  await feed.stop();
}
