// Public surface of the render module.
export { renderFallback, renderReply, type FallbackInput, type ReplyInput } from "./render.ts";
export { renderEdit, renderPartial, type PartialInput } from "./stream.ts";
export { partialPreview } from "./partial.ts";
export type { InvokingMessage, ThreadTarget } from "./reply.ts";
export type { SourceInput } from "./sources.ts";
