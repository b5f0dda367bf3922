// The contract of an application tool: a name, a description and a JSON
// Schema (of the subset in schema.ts) for its input. Checked at registration
// within bounds that are configurable and capped here; the MCP bridge offers
// exactly these to the agent and validates each call's arguments first.
import type { Result } from "../errors.ts";
import { controllerError, err, ok } from "../errors.ts";
import type { Infer, Schema } from "./schema.ts";
import { id, mapOf, obj, str, anyJson } from "./schema.ts";
import { checkJsonValue, checkSchema } from "./schema-check.ts";
import { explain, type ValueFailure } from "./validate.ts";

/** One tool as an application registers it (the input schema is checked by `checkToolDefinitions`). */
export const TOOL_DEFINITION = obj({
  name: id("the tool name the agent calls"),
  description: str({ minLength: 1, description: "what the tool does, as the agent reads it" }),
  inputSchema: mapOf(anyJson(), "a JSON Schema of type object for the arguments (the subset in docs/protocol.md)"),
}, ["name", "description", "inputSchema"]);

/** A registered tool. */
export type ToolDefinition = Infer<typeof TOOL_DEFINITION>;

/** Bounds on tool definitions. */
export interface ToolLimits {
  readonly maxToolDescriptionChars: number;
  readonly maxToolSchemaBytes: number;
  /** Deepest JSON nesting of an input schema, its `default`, `examples`, `enum` and `const` values included. */
  readonly maxToolSchemaDepth: number;
}

/** Defaults of the tool bounds (limits.protocol). */
export const TOOL_LIMIT_DEFAULTS: ToolLimits = { maxToolDescriptionChars: 2048, maxToolSchemaBytes: 16 * 1024, maxToolSchemaDepth: 64 };
/** Hard ceilings in code. */
export const TOOL_LIMIT_CAPS: ToolLimits = { maxToolDescriptionChars: 16 * 1024, maxToolSchemaBytes: 256 * 1024, maxToolSchemaDepth: 256 };
/** Fixed structural bounds of an input schema. */
export const TOOL_SCHEMA_BOUNDS = { maxDepth: 16, maxNodes: 512, maxPatternLength: 256, maxApplicators: 8, maxPatternChars: 4096 } as const;

const refused = (where: string, rule: string) => err(controllerError("invalid_params", { where, rule }));

/**
 * Checks each tool's description and input schema against the bounds and the
 * subset; the schema's root must be `type: "object"`. Names must be distinct.
 * Fails `invalid_params` naming the key path (`tools[i].inputSchema.…`) and
 * the rule that refused (`pattern_ambiguous`, `json_too_deep`, …).
 */
export function checkToolDefinitions(tools: readonly ToolDefinition[], limits: ToolLimits): Result<readonly ToolDefinition[]> {
  const max = {
    description: Math.min(limits.maxToolDescriptionChars, TOOL_LIMIT_CAPS.maxToolDescriptionChars),
    bytes: Math.min(limits.maxToolSchemaBytes, TOOL_LIMIT_CAPS.maxToolSchemaBytes),
    depth: Math.min(limits.maxToolSchemaDepth ?? TOOL_LIMIT_DEFAULTS.maxToolSchemaDepth, TOOL_LIMIT_CAPS.maxToolSchemaDepth),
  };
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    const at = `tools[${i}]`;
    if (names.has(tool.name)) return refused(`${at}.name`, "name_duplicate");
    names.add(tool.name);
    if (tool.description.length > max.description) return refused(`${at}.description`, "description_too_long");
    const schema = tool.inputSchema as Schema;
    if (schema.type !== "object") return refused(`${at}.inputSchema.type`, "root_not_object");
    const where = (path: string) => `${at}.inputSchema${path === "" ? "" : `.${path}`}`;
    // Nesting first (its own stack), so encoding the schema cannot overflow the call stack; size
    // next, so the pattern analysis below runs on at most maxToolSchemaBytes of schema.
    const shape = checkJsonValue(schema, max.depth);
    if (shape !== null) return refused(where(shape.path), shape.rule);
    if (new TextEncoder().encode(JSON.stringify(tool.inputSchema)).length > max.bytes) return refused(`${at}.inputSchema`, "schema_too_large");
    const failed = checkSchema(schema, { ...TOOL_SCHEMA_BOUNDS, maxJsonDepth: max.depth });
    if (failed !== null) return refused(where(failed.path), failed.rule);
  }
  return ok(tools);
}

/**
 * Checks one tool call's arguments as the bridge does: nesting (at most
 * `maxDepth`, walked with its own stack) and finite numbers first, so nothing
 * after it can overflow the call stack, then the input schema. Returns null or
 * the key path and the rule that refused.
 */
export function checkToolArguments(schema: Schema, args: unknown, maxDepth: number): ValueFailure | null {
  const shape = checkJsonValue(args, maxDepth);
  return shape ?? explain(schema, args);
}
