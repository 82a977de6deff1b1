import { describe, expect, it } from "vitest";
import { globToRegex, lineMatcher } from "./regex.js";

const globMatch = (pattern: string, line: string) => lineMatcher({ pattern, mode: "glob" })(line);

describe("globToRegex", () => {
  it("translates wildcards, classes, braces and escapes", () => {
    expect(globMatch("*TODO*", "// TODO: x")).toBe(true);
    expect(globMatch("a?c", "abc")).toBe(true);
    expect(globMatch("a?c", "abbc")).toBe(false);
    expect(globMatch("[!a]*", "abc")).toBe(false);
    expect(globMatch("[a-c]x", "bx")).toBe(true);
    expect(globMatch("[]]", "]")).toBe(true);
    expect(globMatch("{foo,ba{r,z}}!", "baz!")).toBe(true);
    expect(globMatch("\\*", "*")).toBe(true);
    expect(globMatch("\\*", "x")).toBe(false);
    expect(globMatch("a.b(c)|d", "a.b(c)|d")).toBe(true);
    expect(globMatch("a.b", "axb")).toBe(false);
  });

  it("keeps unbalanced brackets and braces literal", () => {
    expect(globMatch("[abc", "[abc")).toBe(true);
    expect(globMatch("{abc", "{abc")).toBe(true);
    expect(globMatch("{abc}", "{abc}")).toBe(true);
    expect(globToRegex("x")).toBe("x");
  });
});

describe("lineMatcher", () => {
  it("matches whole words with Unicode letters as word characters", () => {
    const m = lineMatcher({ pattern: "caf", mode: "fixed", word: true });
    expect(m("café au lait")).toBe(false);
    expect(m("a caf here")).toBe(true);
    expect(lineMatcher({ pattern: "-x", mode: "fixed", word: true })("run -x now")).toBe(true);
  });

  it("refuses RE2-incompatible syntax with INVALID_ARGUMENT", () => {
    expect(() => lineMatcher({ pattern: "(a)\\1", mode: "regexp" })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT" }),
    );
  });
});
