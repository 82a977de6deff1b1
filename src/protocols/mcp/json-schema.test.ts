// The advertised output schemas, checked with the validators the SDK clients themselves use (v1:
// a draft-07 Ajv; v2: a 2020-12 Ajv): every tool's schema admits the error shape, and still
// rejects what is neither a result nor an error.
import { AjvJsonSchemaValidator as V2Validator } from "@modelcontextprotocol/client/validators/ajv";
import { AjvJsonSchemaValidator as V1Validator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { inputJsonSchema, outputJsonSchema } from "./json-schema.js";
import { TOOLS } from "./tools.js";

const validators = { "SDK v1 (draft-07)": new V1Validator(), "SDK v2 (2020-12)": new V2Validator() };
const error = { error: { code: "NOT_FOUND", message: "/a does not exist; use file_list" } };

describe.each(Object.entries(validators))("output JSON Schemas under the %s client validator", (_, validator) => {
  for (const tool of TOOLS) {
    it(`${tool.name} admits {error: {code, message}} and nothing malformed`, () => {
      const check = validator.getValidator(outputJsonSchema(tool.output));
      expect(check(error).valid).toBe(true);
      expect(check({ error: { ...error.error, details: { path: "/a" } } }).valid).toBe(true);
      expect(check({ error: { code: "NO_SUCH_CODE", message: "x" } }).valid).toBe(false);
      expect(check({ error: { code: "NOT_FOUND" } }).valid).toBe(false);
      expect(check({ unrelated: true }).valid).toBe(false);
      expect(outputJsonSchema(tool.output).type).toBe("object");
      expect(inputJsonSchema(tool.input).type).toBe("object");
    });
  }

  it("the bare result schema alone would reject the error shape (why the union is needed)", () => {
    const result = z.object({ path: z.string() });
    const bare = validator.getValidator(z.toJSONSchema(result, { target: "draft-2020-12" }) as JsonSchemaType);
    expect(bare(error).valid).toBe(false);
    const both = validator.getValidator(outputJsonSchema(result));
    expect(both(error).valid).toBe(true);
    expect(both({ path: "/a" }).valid).toBe(true);
  });
});

// The schemas are 2020-12 with no $schema; a v1 client reads them as draft-07. That is sound only
// while no tool uses a keyword the two drafts spell differently ($defs, prefixItems, …).
describe("2020-12 schemas read the same under draft-07", () => {
  const strip = (s: Record<string, unknown>) => {
    const { $schema: _, ...rest } = s;
    return rest;
  };
  for (const tool of TOOLS) {
    it(tool.name, () => {
      expect(inputJsonSchema(tool.input)).not.toHaveProperty("$schema");
      for (const [schema, io] of [
        [tool.input, "input"],
        [tool.output, "output"],
      ] as const) {
        expect(strip(z.toJSONSchema(schema, { target: "draft-7", io }) as Record<string, unknown>)).toEqual(
          strip(z.toJSONSchema(schema, { target: "draft-2020-12", io }) as Record<string, unknown>),
        );
      }
    });
  }
});
