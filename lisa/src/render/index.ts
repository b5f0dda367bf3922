// Public surface of the render module.
export { renderFallback, renderReply, type FallbackInput, type ReplyInput } from "./render.ts";
export type { InvokingMessage, ThreadTarget } from "./reply.ts";
export type { SourceInput } from "./sources.ts";
