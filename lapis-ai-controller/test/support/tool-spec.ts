// A tool spec for tests: the handler plus a description and an input schema,
// which every registered tool must carry (issue 25 point 3).
import type { ToolHandler, ToolSpec } from "../../src/client.ts";
import type { ToolDefinition } from "../../src/domain/contract/tools.ts";

/** An input schema that accepts any object. */
export const ANY_OBJECT: ToolDefinition["inputSchema"] = { type: "object" };

/** Wraps a handler as a tool with a description and (by default) an open object schema. */
export function tool(handler: ToolHandler, description = "A test tool.", inputSchema: ToolDefinition["inputSchema"] = ANY_OBJECT): ToolSpec {
  return { description, inputSchema, handler };
}

/** The registry-side definitions for tool names (in-process bridge tests). */
export function definitionsOf(names: readonly string[]): ToolDefinition[] {
  return names.map((name) => ({ name, description: `Test tool ${name}.`, inputSchema: ANY_OBJECT }));
}
