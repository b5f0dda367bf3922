// Real-Synapse harness for acceptance tests: install, start/stop, admin and human-member helpers.
export { type SynapseServer, type StartSynapseOptions, startSynapse } from "./synapse/server.ts";
export { freeLoopbackPort } from "./homeserver/process.ts";
export { ensureSynapseInstalled, INSTALL_SCRIPT, type SynapseInstall } from "./synapse/install.ts";
export type { TokenLifetimes } from "./synapse/config.ts";
export {
  type HomeserverRef,
  type LoginOptions,
  type RefreshedTokens,
  type RegisteredUser,
  type RegisterUserOptions,
  type RegistrarRef,
  login,
  loginRaw,
  refreshTokens,
  registerUser,
  registrationMac,
  resetPassword,
  userIdOf,
} from "./synapse/admin.ts";
export { type CreateRoomOptions, MatrixTestClient, type MatrixTestClientInit } from "./synapse/client.ts";
export {
  editContent,
  escapeHtml,
  htmlContent,
  type Mentions,
  mentionContent,
  type MessageType,
  permalink,
  reactionContent,
  replyContent,
  type ReplyOptions,
  textContent,
  threadContent,
  type ThreadOptions,
  withoutReplyFallback,
} from "./synapse/content.ts";
export {
  eventsBy,
  readTimeline,
  type ReadTimelineOptions,
  relatesTo,
  type TimelineEvent,
  type TimelineReader,
  waitForEvents,
  type WaitForEventsOptions,
} from "./synapse/timeline.ts";
export { type JsonObject, requestJson, SynapseHttpError } from "./synapse/http.ts";
