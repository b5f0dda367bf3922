// JSON-RPC 2.0 frame codec shared by the server and the browser-safe client.
// No runtime imports beyond the language: ws-client.ts ships in the SDK.

/** The only protocol this controller speaks; other values fail `protocol_unsupported`. */
export const PROTOCOL = "lapis-ai-controller/1";
/** Default frame limit in bytes (1 MiB). */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;
/** Hard ceiling for any configured frame limit (8 MiB); larger frames close the socket. */
export const MAX_FRAME_BYTES_CEILING = 8 * 1024 * 1024;

/** JSON-RPC numeric error codes used on the wire. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  application: -32000,
} as const;

/** A JSON-RPC request or response identifier. */
export type FrameId = string | number;

/** Error body: `message` and `data.code` carry the same stable snake_case code. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data: { readonly code: string; readonly retryable: boolean; readonly retryAt?: number };
}

/** One decoded inbound frame. */
export type Frame =
  | { readonly kind: "request"; readonly id: FrameId; readonly method: string; readonly params: Record<string, unknown> }
  | { readonly kind: "notification"; readonly method: string; readonly params: Record<string, unknown> }
  | { readonly kind: "result"; readonly id: FrameId; readonly result: unknown }
  | { readonly kind: "error"; readonly id: FrameId | null; readonly error: RpcError }
  | { readonly kind: "invalid"; readonly id: FrameId | null; readonly error: RpcError };

/** Builds an error body for a stable code. */
export function rpcError(code: string, retryable = false, rpcCode: number = RPC.application, retryAt?: number): RpcError {
  return { code: rpcCode, message: code, data: retryAt === undefined ? { code, retryable } : { code, retryable, retryAt } };
}

function isId(value: unknown): value is FrameId {
  return (typeof value === "string" && value.length > 0 && value.length <= 128) ||
    (typeof value === "number" && Number.isSafeInteger(value));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readError(value: unknown): RpcError | undefined {
  if (!isRecord(value) || typeof value.code !== "number" || typeof value.message !== "string") return undefined;
  const data = isRecord(value.data) ? value.data : {};
  const code = typeof data.code === "string" ? data.code : value.message;
  const retryAt = typeof data.retryAt === "number" && Number.isSafeInteger(data.retryAt) ? { retryAt: data.retryAt } : {};
  return { code: value.code, message: value.message, data: { code, retryable: data.retryable === true, ...retryAt } };
}

/** Decodes one text frame; never throws. `byteLength` is checked by the caller against the limit. */
export function decodeFrame(text: string): Frame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "invalid", id: null, error: rpcError("parse_error", false, RPC.parseError) };
  }
  if (!isRecord(value) || value.jsonrpc !== "2.0") {
    return { kind: "invalid", id: null, error: rpcError("invalid_request", false, RPC.invalidRequest) };
  }
  const id = isId(value.id) ? value.id : null;
  if ("method" in value) {
    if (typeof value.method !== "string" || value.method.length === 0 || value.method.length > 128) {
      return { kind: "invalid", id, error: rpcError("invalid_request", false, RPC.invalidRequest) };
    }
    const params = value.params === undefined ? {} : value.params;
    if (!isRecord(params)) return { kind: "invalid", id, error: rpcError("invalid_params", false, RPC.invalidParams) };
    if (!("id" in value)) return { kind: "notification", method: value.method, params };
    if (id === null) return { kind: "invalid", id: null, error: rpcError("invalid_request", false, RPC.invalidRequest) };
    return { kind: "request", id, method: value.method, params };
  }
  if ("result" in value && id !== null) return { kind: "result", id, result: value.result };
  const error = readError(value.error);
  if (error !== undefined && (id !== null || value.id === null)) return { kind: "error", id, error };
  return { kind: "invalid", id, error: rpcError("invalid_request", false, RPC.invalidRequest) };
}

/** Encodes a request frame. */
export function encodeRequest(id: FrameId, method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method, params });
}

/** Encodes a notification frame (no id, no reply). */
export function encodeNotification(method: string, params: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: "2.0", method, params });
}

/** Encodes a result frame. */
export function encodeResult(id: FrameId, result: unknown): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result ?? null)}}`;
}

/** Encodes a result whose JSON text is already fixed (stored receipts stay byte-identical). */
export function encodeRawResult(id: FrameId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

/** Encodes an error frame. */
export function encodeError(id: FrameId | null, error: RpcError): string {
  return JSON.stringify({ jsonrpc: "2.0", id, error });
}

/** UTF-8 byte length of a string without allocating a buffer. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
