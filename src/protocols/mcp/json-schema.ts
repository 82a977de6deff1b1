// Zod schemas to the JSON Schemas MCP advertises. Output schemas admit the error shape too: SDK
// clients validate structuredContent against them even on isError results and drop what fails.
import { z } from "zod";
import { toolError } from "./schemas.js";

/** A JSON Schema object MCP accepts for a tool's input or output: an object at the root. */
export type ObjectJsonSchema = { type: "object"; [key: string]: unknown };

// JSON Schema 2020-12, MCP's dialect (2025-11-25 and 2026-07-28). `$schema` is left out: a schema
// without one is 2020-12 by the spec, and SDK v1 clients compile schemas with a draft-07 Ajv that
// knows no 2020-12 meta-schema. (For afs's tools the 2020-12 and draft-07 renderings are the same
// JSON; json-schema.test.ts keeps it that way.)
const toJson = (schema: z.ZodType, io: "input" | "output"): Record<string, unknown> => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { target: "draft-2020-12", io }) as Record<string, unknown>;
  return json;
};

export function inputJsonSchema(schema: z.ZodObject): ObjectJsonSchema {
  const json = toJson(schema, "input");
  if (json.type !== "object") throw new Error("a tool's input schema must be an object");
  return { ...json, type: "object" };
}

const ERROR_JSON = toJson(toolError, "output");

/** The result's schema or the error shape; the root stays `type: object` as MCP requires. */
export function outputJsonSchema(schema: z.ZodType): ObjectJsonSchema {
  return { type: "object", anyOf: [toJson(schema, "output"), ERROR_JSON] };
}
