import { describe, expect, it } from "vitest";
import { escapeTag, Keys, WORKSPACE_KEYS } from "./keys.js";

/** The part of a key Redis Cluster hashes: from the first { to the next }, when not empty. */
function hashTag(key: string): string {
  const open = key.indexOf("{");
  const close = open === -1 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

describe("Redis key layout", () => {
  const names = ["ws", "a{b}c", "}{", "{x}", "{}", "100%", "%7B", "日本", "a:b", ""];

  it("keeps every key of one workspace in one hash tag, whatever the name", () => {
    const keys = new Keys("afs");
    const tags = new Set<string>();
    for (const name of names) {
      const all = keys.workspace(name);
      expect(all).toHaveLength(WORKSPACE_KEYS.length);
      const tag = hashTag(all[0] as string);
      for (const k of all) expect(hashTag(k)).toBe(tag);
      tags.add(tag);
    }
    // Distinct names never share a tag (escaping is one-to-one).
    expect(tags.size).toBe(names.length);
  });

  it("escapes only %, { and }", () => {
    expect(escapeTag("a{b}c%d")).toBe("a%7Bb%7Dc%25d");
    expect(escapeTag("plain/名前")).toBe("plain/名前");
  });

  it("keeps each object's keys together and refuses a prefix with braces", () => {
    const keys = new Keys("p");
    const h = "ab".repeat(32);
    expect(hashTag(keys.layout(h))).toBe(hashTag(keys.object("blob", h)));
    expect(hashTag(keys.layoutDraft(h, "x"))).toBe(hashTag(keys.object("blob", h)));
    expect(hashTag(keys.tokenSeq)).toBe(hashTag(keys.tokens));
    expect(hashTag(keys.tokenRevocations)).toBe(hashTag(keys.tokens));
    expect(() => new Keys("a{b")).toThrow(/prefix/);
  });
});
