// The advertised output schemas, checked with the validator the SDK client itself uses: every
// tool's schema admits the error shape, and still rejects what is neither a result nor an error.
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { inputJsonSchema, outputJsonSchema } from "./json-schema.js";
import { TOOLS } from "./tools.js";

const validator = new AjvJsonSchemaValidator();
const error = { error: { code: "NOT_FOUND", message: "/a does not exist; use file_list" } };

describe("output JSON Schemas", () => {
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
    const bare = validator.getValidator(z.toJSONSchema(result, { target: "draft-7" }) as JsonSchemaType);
    expect(bare(error).valid).toBe(false);
    const both = validator.getValidator(outputJsonSchema(result));
    expect(both(error).valid).toBe(true);
    expect(both({ path: "/a" }).valid).toBe(true);
  });
});
