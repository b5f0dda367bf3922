// The one contract (issue 25 point 6): the subset validator, the schema
// checker for application tool inputs, and that the SDK's types are the
// schemas' inferred types.
import assert from "node:assert/strict";
import { test } from "node:test";
import { METHODS, METHOD_NAMES, type ParamsOf, type ResultOf } from "../../../src/domain/contract/methods.ts";
import { CLIENT_ERROR_CODES, type ClientErrorCode, type Turn } from "../../../src/domain/contract/sdk-types.ts";
import { checkToolDefinitions, TOOL_LIMIT_DEFAULTS } from "../../../src/domain/contract/tools.ts";
import type { JsonValue } from "../../../src/domain/contract/schema.ts";
import { checkSchema } from "../../../src/domain/contract/schema-check.ts";
import { validate } from "../../../src/domain/contract/validate.ts";
import { ERROR_CODES } from "../../../src/domain/errors.ts";
import { INITIAL_SCOPES, SCOPE_MAP } from "../../../src/auth/scopes.ts";
import { transportLimits } from "../../../src/transport/options.ts";

test("P-OPS-10 every dispatched method has one contract entry with params, result, scope and error codes", () => {
  // SCOPE_MAP is read from the contract; the dispatch-table walk (AIC-API-003c) then covers the contract too.
  assert.deepEqual([...METHOD_NAMES].sort(), Object.keys(SCOPE_MAP).sort());
  for (const name of METHOD_NAMES) {
    const c = METHODS[name];
    assert.ok(c.scope === null ? name === "hello" : INITIAL_SCOPES.includes(c.scope), name);
    for (const code of c.errors) assert.ok((ERROR_CODES as readonly string[]).includes(code), `${name} ${code}`);
  }
  assert.ok(CLIENT_ERROR_CODES.includes("wait_timeout") && CLIENT_ERROR_CODES.includes("not_found"));
});

test("P-OPS-10 params validation: required keys, unknown keys, bounds, enums, nested objects and oneOf name the key path", () => {
  const create = METHODS["threads.create"].params;
  assert.equal(validate(create, { commandId: "c1", workspace: "w", provider: "p" }), null);
  assert.equal(validate(create, { commandId: "c1", workspace: "w" }), "provider");
  assert.equal(validate(create, { commandId: "c1", workspace: "w", provider: "p", zz: 1 }), "zz");
  assert.equal(validate(create, { commandId: " bad", workspace: "w", provider: "p" }), "commandId");
  assert.equal(validate(create, { commandId: "c", workspace: "w", provider: "p", binding: { retention: "some" } }), "binding.retention");
  assert.equal(validate(create, { commandId: "c", workspace: "w", provider: "p", binding: { applicationRef: null, toolEndpoints: ["a", 3] } }), "binding.toolEndpoints[1]");
  assert.equal(validate(create, { commandId: "c", workspace: "w", provider: "p", config: { title: "x".repeat(201) } }), "config.title");
  assert.equal(validate(METHODS["threads.reserve"].params, { zzUnknownKey: 1 }), "zzUnknownKey");
  assert.equal(validate(METHODS["threads.snapshot"].params, { threadId: "t", tailLimit: 1001 }), "tailLimit");
  assert.equal(validate(METHODS["threads.snapshot"].params, { threadId: "t", tailLimit: 1.5 }), "tailLimit");
  const respond = METHODS["interactions.respond"].params;
  assert.equal(validate(respond, { commandId: "c", turnId: "t", interactionId: "i", optionId: "allow" }), null);
  assert.equal(validate(respond, { commandId: "c", turnId: "t", interactionId: "i", outcome: "cancelled" }), null);
  assert.notEqual(validate(respond, { commandId: "c", turnId: "t", interactionId: "i", optionId: "allow", outcome: "cancelled" }), null);
  assert.notEqual(validate(respond, { commandId: "c", turnId: "t", interactionId: "i" }), null);
  assert.equal(validate(METHODS["turns.submit"].params, { commandId: "c", threadId: "t", input: { text: "hi" } }), null);
  assert.equal(validate(METHODS["turns.submit"].params, { commandId: "c", threadId: "t", input: 5 }), "input");
});

test("P-OPS-10 the contract's result schemas accept what the service returns (snapshot binding round trip, D7)", () => {
  const binding = { applicationRef: null, contextSources: [], toolEndpoints: [], restricted: false, retention: "full" };
  assert.equal(validate(METHODS["threads.attach"].params, { threadId: "t", binding }), null);
  const turn: Turn = {
    turnId: "t1", threadId: "th", state: "completed", attemptOf: null, errorCode: null,
    config: { configVersion: 1, retention: "full", providerId: "codex", restricted: false, requestedMode: null, approval: { requested: "ask", effective: "ask", suppressedBy: null }, nativeMode: null },
    interactions: [], memory: null,
  };
  assert.equal(validate(METHODS["turns.get"].result, turn), null);
  const recalled = { endpointId: "mem", code: null, profile: "vault", budgetTokens: 2000, usedTokens: 40, offered: 2, invalid: 0, rejected: 0, skipped: 1,
    rendered: [{ memoryId: "user/ep-1", origin: "recall", truncated: false }] } as const;
  assert.equal(validate(METHODS["turns.get"].result, { ...turn, memory: recalled }), null);
  assert.equal(validate(METHODS["turns.get"].result, { ...turn, memory: { ...recalled, rendered: [{ memoryId: "user/ep-1", origin: "recall", truncated: false, text: "x" }] } }), "memory", "memory text never fits the shape");
  assert.equal(validate(METHODS["turns.get"].result, { ...turn, state: "nope" }), "state");
});

test("P-PRV-11 tool input schemas: the subset only, bounded, object root; a failure names the key path", () => {
  const ok = { name: "lookup", description: "Looks a word up.", inputSchema: { type: "object", properties: { word: { type: "string", maxLength: 64 } }, required: ["word"], additionalProperties: false } } as const;
  assert.ok(checkToolDefinitions([ok], TOOL_LIMIT_DEFAULTS).ok);
  const bad = (inputSchema: { readonly [key: string]: JsonValue }) => {
    const r = checkToolDefinitions([{ ...ok, inputSchema }], TOOL_LIMIT_DEFAULTS);
    return r.ok ? null : r.error.where;
  };
  assert.equal(bad({ type: "string" }), "tools[0].inputSchema.type");
  assert.equal(bad({ type: "object", properties: { a: { $ref: "#/x" } } }), "tools[0].inputSchema.properties.a.$ref");
  assert.equal(bad({ type: "object", properties: { a: { type: "string", pattern: "(" } } }), "tools[0].inputSchema.properties.a.pattern");
  assert.equal(bad({ type: "object", properties: { a: { type: "strange" } } }), "tools[0].inputSchema.properties.a.type");
  let deep: { readonly [key: string]: JsonValue } = { type: "object" };
  for (let i = 0; i < 20; i++) deep = { type: "object", properties: { d: deep } };
  assert.match(String(bad(deep)), /^tools\[0\]\.inputSchema(\.properties\.d)+$/);
  assert.equal(bad({ type: "object", description: "x".repeat(TOOL_LIMIT_DEFAULTS.maxToolSchemaBytes) }), "tools[0].inputSchema");
  const long = checkToolDefinitions([{ ...ok, description: "x".repeat(TOOL_LIMIT_DEFAULTS.maxToolDescriptionChars + 1) }], TOOL_LIMIT_DEFAULTS);
  assert.equal(long.ok ? null : long.error.where, "tools[0].description");
  const twice = checkToolDefinitions([ok, ok], TOOL_LIMIT_DEFAULTS);
  assert.equal(twice.ok ? null : twice.error.where, "tools[1].name");
  assert.equal(checkSchema(ok.inputSchema, { maxDepth: 4, maxNodes: 8, maxPatternLength: 8 }), null);
  assert.equal(validate(ok.inputSchema, { word: "hi" }), null);
  assert.equal(validate(ok.inputSchema, { word: 3 }), "word");
  assert.equal(validate(ok.inputSchema, {}), "word");
});

test("P-OPS-10 the SDK's types are the schemas' inferred types", () => {
  // Compile-time checks: these assignments fail `tsc` if the inference drifts.
  const params: ParamsOf<"threads.create"> = { commandId: "c", workspace: "w", provider: "p", binding: { retention: "metadata-only" } };
  const receipt: ResultOf<"turns.submit"> = { commandId: "c", turnId: "t", threadId: "th", attemptOf: null, retention: "full" };
  const code: ClientErrorCode = "turn_fenced";
  // @ts-expect-error an unknown retention is not a ParamsOf<"threads.create">
  const wrong: ParamsOf<"threads.create"> = { commandId: "c", workspace: "w", provider: "p", binding: { retention: "some" } };
  // @ts-expect-error an unknown code is not a ClientErrorCode
  const unknownCode: ClientErrorCode = "no_such_code";
  assert.ok(params && receipt && code && wrong && unknownCode);
});

test("P-PRV-11 tool bounds are configurable in limits.protocol and capped in code", () => {
  const limits = transportLimits({ maxToolDescriptionChars: 100, maxToolSchemaBytes: 1024 });
  assert.ok(limits.ok && limits.value.maxToolDescriptionChars === 100 && limits.value.maxToolSchemaBytes === 1024);
  const over = transportLimits({ maxToolSchemaBytes: 10 * 1024 * 1024 });
  assert.equal(over.ok ? null : over.error.where, "transport.maxToolSchemaBytes");
  const defaults = transportLimits({});
  assert.ok(defaults.ok && defaults.value.maxToolDescriptionChars === TOOL_LIMIT_DEFAULTS.maxToolDescriptionChars);
});
