// The argument schemas must convert to JSON Schema (MCP tool definitions are generated from them)
// and describe every argument for the model.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as ops from "./index.js";

const schemas: [string, z.ZodObject][] = Object.entries(ops).flatMap(([name, value]): [string, z.ZodObject][] =>
  value instanceof z.ZodObject ? [[name, value]] : [],
);

describe("operation schemas", () => {
  it("exports one schema per operation", () => {
    expect(schemas.map(([name]) => name).sort()).toEqual([
      "createExclusiveArgs",
      "deleteArgs",
      "deleteLinesArgs",
      "globArgs",
      "grepArgs",
      "insertArgs",
      "linesArgs",
      "listArgs",
      "mkdirArgs",
      "patchArgs",
      "queryArgs",
      "readArgs",
      "renameArgs",
      "replaceArgs",
      "writeArgs",
    ]);
  });

  it.each(schemas)("%s converts to JSON Schema with a description for every property", (_name, schema) => {
    const json = z.toJSONSchema(schema, { io: "input" }) as { properties: Record<string, { description?: string }> };
    for (const [key, prop] of Object.entries(json.properties)) {
      expect(prop.description, key).toBeTruthy();
    }
  });

  it("rejects unknown arguments, so a misspelled option is not silently ignored", () => {
    const r = ops.grepArgs.safeParse({ pattern: "x", ignoreCase: true });
    expect(r.success).toBe(false);
  });
});
