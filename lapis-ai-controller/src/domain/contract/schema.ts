// The JSON Schema subset the protocol contract is written in, small builders
// that keep literal types, and `Infer<S>`, the TypeScript type a schema
// describes. The contract is written once with these builders: the service
// validates with the same objects (validate.ts), `npm run spec:build` emits
// them as JSON Schema, and the SDK's types are `Infer` of them, so the three
// cannot drift.

/** A JSON value. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/** The JSON Schema (2020-12) subset used by the contract and accepted for application tool inputs. */
export interface Schema {
  readonly type?: SchemaType | readonly SchemaType[];
  readonly description?: string;
  readonly title?: string;
  readonly properties?: { readonly [key: string]: Schema };
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | Schema;
  readonly maxProperties?: number;
  readonly items?: Schema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly enum?: readonly JsonValue[];
  readonly const?: JsonValue;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly anyOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly default?: JsonValue;
  readonly examples?: readonly JsonValue[];
  readonly format?: string;
}

/** The primitive type names of the subset. */
export type SchemaType = "object" | "array" | "string" | "integer" | "number" | "boolean" | "null";

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type InferObject<P, R> = Simplify<
  { readonly [K in keyof P & R]: Infer<P[K]> } & { readonly [K in Exclude<keyof P, R>]?: Infer<P[K]> }
>;

type InferType<T, S> = T extends "string" ? string
  : T extends "integer" | "number" ? number
  : T extends "boolean" ? boolean
  : T extends "null" ? null
  : T extends "array" ? (S extends { readonly items: infer I } ? readonly Infer<I>[] : readonly JsonValue[])
  : T extends "object" ? (
      S extends { readonly properties: infer P } ? InferObject<P, S extends { readonly required: readonly (infer R)[] } ? R : never>
        : S extends { readonly additionalProperties: infer A extends Schema } ? { readonly [key: string]: Infer<A> }
        : { readonly [key: string]: JsonValue }
    )
  : JsonValue;

/** The TypeScript type of the values a schema accepts (for the contract's own schemas). */
export type Infer<S> = S extends { readonly const: infer C } ? C
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly anyOf: readonly (infer U)[] } ? Infer<U>
  : S extends { readonly oneOf: readonly (infer U)[] } ? Infer<U>
  : S extends { readonly type: infer T } ? (T extends readonly (infer E)[] ? InferType<E, S> : InferType<T, S>)
  : JsonValue;

type Annotations = { readonly description?: string };

/** The identifier shape of the protocol (commandId, threadId, endpointId …). */
export const ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$";

/** Bounds and annotations of a string schema. */
export type StringBounds = Pick<Schema, "minLength" | "maxLength" | "pattern" | "description" | "format">;

/** A string, optionally bounded. */
export function str(extra: StringBounds = {}): { readonly type: "string" } & StringBounds {
  return { type: "string", ...extra };
}

/** A protocol identifier (1–128 chars, `[A-Za-z0-9][A-Za-z0-9._:-]*`). */
export function id(description?: string): { readonly type: "string"; readonly pattern: string } {
  return { type: "string", pattern: ID_PATTERN, ...(description === undefined ? {} : { description }) };
}

/** An integer in [minimum, maximum]. */
export function int(minimum: number, maximum: number = Number.MAX_SAFE_INTEGER, description?: string): { readonly type: "integer"; readonly minimum: number; readonly maximum: number } {
  return { type: "integer", minimum, maximum, ...(description === undefined ? {} : { description }) };
}

/** A boolean. */
export function bool(description?: string): { readonly type: "boolean" } {
  return { type: "boolean", ...(description === undefined ? {} : { description }) };
}

/** One of the listed values. */
export function oneOfValues<const E extends readonly JsonValue[]>(values: E, description?: string): { readonly enum: E } {
  return { enum: values, ...(description === undefined ? {} : { description }) };
}

/** Exactly this value. */
export function literal<const C extends JsonValue>(value: C, description?: string): { readonly const: C } {
  return { const: value, ...(description === undefined ? {} : { description }) };
}

/** An array of `items`, at most `maxItems` long. */
export function list<const I extends Schema>(items: I, maxItems: number, description?: string): { readonly type: "array"; readonly items: I; readonly maxItems: number } {
  return { type: "array", items, maxItems, ...(description === undefined ? {} : { description }) };
}

/** A closed object: `required` keys must be present, unknown keys are refused. */
export function obj<const P extends { readonly [key: string]: Schema }, const R extends readonly (keyof P & string)[] = []>(
  properties: P,
  required?: R,
  annotations: Annotations = {},
): { readonly type: "object"; readonly properties: P; readonly required: NoInfer<R>; readonly additionalProperties: false } {
  return { type: "object", properties, required: (required ?? []) as R, additionalProperties: false, ...annotations };
}

/** An object with free keys whose values match `values`. */
export function mapOf<const A extends Schema>(values: A, description?: string): { readonly type: "object"; readonly additionalProperties: A } {
  return { type: "object", additionalProperties: values, ...(description === undefined ? {} : { description }) };
}

/** Any of the given schemas. */
export function anyOf<const U extends readonly Schema[]>(options: U, description?: string): { readonly anyOf: U } {
  return { anyOf: options, ...(description === undefined ? {} : { description }) };
}

/** Exactly one of the given schemas. */
export function oneOf<const U extends readonly Schema[]>(options: U, description?: string): { readonly oneOf: U } {
  return { oneOf: options, ...(description === undefined ? {} : { description }) };
}

/** `schema` or null. */
export function nullable<const S extends Schema>(schema: S): { readonly anyOf: readonly [S, { readonly type: "null" }] } {
  return { anyOf: [schema, { type: "null" }] as const };
}

/** Any JSON value (payloads the protocol passes through). */
export function anyJson(description?: string): { readonly description?: string } {
  return description === undefined ? {} : { description };
}
