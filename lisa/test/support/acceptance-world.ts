// Acceptance-test world: Lisa as a child process against a real homeserver (Synapse or Dendrite),
// the scripted LLM, the fake SearXNG and a local page server.
export {
  type AcceptanceWorld,
  type AcceptanceWorldOptions,
  HUMAN_PASSWORD,
  LISA_DEVICE,
  LISA_ID,
  type PageServer,
  SETUP_DEVICE,
  SETUP_MARK,
  startAcceptanceWorld,
  startPageServer,
} from "./acceptance/world.ts";
export { type CliRun, type LisaExit, type LisaLogLine, LisaProcess, type LisaRun, pollUntil, REPO, runLisaCli } from "./acceptance/lisa-process.ts";
export { type HomeserverKind, homeserverLabel, homeserversUnderTest } from "./homeserver.ts";
export { type ContextMessage, contextMessages, defaultAnswer, LlmRouter, type RequestView, type Route, unescapeXml, viewOf } from "./acceptance/llm-router.ts";
export {
  assertNoCanary,
  assertRepliesExactly,
  barrier,
  bodyOf,
  groupByTarget,
  inReplyTo,
  isLisaMessage,
  lisaMessages,
  typingUsers,
  waitForReplies,
  waitForReply,
} from "./acceptance/oracle.ts";
