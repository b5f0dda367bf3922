// Public surface of the context module.
export { buildRoomContext } from "./build.ts";
export { escapeXml } from "./block.ts";
export { replyTargetOf, stripReplyFallback, threadRootOf } from "./normalise.ts";
export { ContextError, type ContextRequest, type RoomContext } from "./types.ts";
