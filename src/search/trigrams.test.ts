import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextCache } from "./text-cache.js";
import { literalKeys, WIDE_BASE } from "./trigram-token.js";
import { asciiTrigramKeys, blockedTrigramKeys, bloomHas, foldText, trigramKeys, trigramKeysOf } from "./trigrams.js";

/** A document's keys copied out of the scratch buffer they are a view of. */
const keysOf = (text: string): number[] => [...trigramKeysOf(text)];

describe("trigrams", () => {
  it("folds ASCII case, the Kelvin sign and long s, unit for unit", () => {
    expect(foldText("HeLLo \u212a\u017f ÉΣ")).toBe("hello ks ÉΣ");
    expect(foldText("plain")).toBe("plain");
  });

  it("lists each trigram of a text once, ASCII and wide ones in distinct key ranges", () => {
    const doc = keysOf("abcabcabc");
    expect(doc).toEqual([...new Set(doc)]);
    expect(doc).toHaveLength(3); // abc, bca, cab
    expect(doc).toEqual([(97 << 14) | (98 << 7) | 99, (98 << 14) | (99 << 7) | 97, (99 << 14) | (97 << 7) | 98]);
    const wide = keysOf("日本語");
    expect(wide).toHaveLength(1);
    expect(wide[0]).toBeGreaterThanOrEqual(WIDE_BASE);
    expect(doc.every((k) => k < WIDE_BASE)).toBe(true);
    expect(keysOf("ab")).toEqual([]);
  });

  // What the index relies on: a literal's tokens are among the tokens of any text holding it
  // (in any ASCII case), call after call.
  it("gives every substring's tokens to the text that holds it (property)", () => {
    const unit = fc.constantFrom("a", "b", "A", "B", "k", "K", "\u212a", "s", "\u017f", "é", "日", "\n", " ", "😀");
    const text = fc.array(unit, { maxLength: 40 }).map((u) => u.join(""));
    fc.assert(
      fc.property(text, text, fc.nat(), fc.nat(), (other, t, a, b) => {
        trigramKeysOf(other); // a previous document must not leave state behind
        const doc = new Set(keysOf(t));
        const from = Math.min(a, b) % (t.length + 1);
        const lit = t.slice(from, from + 3 + (Math.max(a, b) % 8));
        const query = a % 2 === 1 ? lit.replace(/[a-z]/g, (c) => c.toUpperCase()) : lit;
        return literalKeys(foldText(query), 64).every((key) => doc.has(key));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps at most `max` keys of a long literal, its first and last among them", () => {
    const keys = literalKeys("abcdefghijklmnopqrstuvwxyz", 4);
    expect(keys).toHaveLength(4);
    expect(keys[0]).toBe(literalKeys("abc")[0]);
    expect(keys[3]).toBe(literalKeys("xyz")[0]);
  });
});

describe("TextCache", () => {
  it("evicts the least recently used texts of earlier passes beyond its budget, and refuses one text over a quarter of it", () => {
    const cache = new TextCache(100);
    cache.set("a", "x".repeat(20));
    cache.set("b", "y".repeat(20));
    cache.set("c", "z".repeat(20));
    cache.nextPass();
    expect(cache.get("a")).toBe("x".repeat(20)); // a is now the most recent
    cache.set("d", "w".repeat(20));
    cache.set("e", "v".repeat(20));
    cache.set("f", "u".repeat(20)); // 120 > 100: the least recent (b) goes
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBeDefined();
    expect(cache.size).toBe(5);
    cache.set("big", "q".repeat(26));
    expect(cache.get("big")).toBeUndefined();
  });

  it("keeps a pass's first texts when the pass reads more than it holds, so the next pass finds them", () => {
    const cache = new TextCache(100);
    const keys = Array.from({ length: 12 }, (_, i) => `t${i}`);
    for (let pass = 0; pass < 3; pass++) {
      cache.nextPass();
      const hits = keys.filter((k) => {
        if (cache.get(k) !== undefined) return true;
        cache.set(k, k.padEnd(20, "."));
        return false;
      });
      // Plain LRU over a cycle longer than the cache evicts each text before it comes round: no hits.
      expect(hits).toEqual(pass === 0 ? [] : keys.slice(0, 5));
    }
    // Another search's texts still take the place of the least recently used.
    cache.nextPass();
    cache.set("other", "o".repeat(20));
    expect(cache.get("other")).toBeDefined();
    expect(cache.get("t0")).toBeUndefined();
    expect(cache.size).toBe(5);
  });
});

describe("TextCache against a model", () => {
  it("holds what a plain list kept in recency order holds, under any mix of gets, sets and passes (property)", () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant("get" as const), key: fc.nat(9) }),
      fc.record({ kind: fc.constant("set" as const), key: fc.nat(9), length: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant("pass" as const) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const cache = new TextCache(100);
        // The model: entries least recent first, each with the pass that last used it.
        let model: { key: string; text: string; pass: number }[] = [];
        let pass = 0;
        for (const o of ops) {
          if (o.kind === "pass") {
            cache.nextPass();
            pass++;
          } else if (o.kind === "get") {
            const key = `k${o.key}`;
            const i = model.findIndex((e) => e.key === key);
            const hit = i >= 0 ? model.splice(i, 1)[0] : undefined;
            if (hit) model.push({ ...hit, pass });
            expect(cache.get(key)).toBe(hit?.text);
          } else {
            const key = `k${o.key}`;
            const text = `${key}:`.padEnd(o.length, "x").slice(0, Math.max(o.length, 0));
            cache.set(key, text);
            if (text.length > 25) continue;
            model = model.filter((e) => e.key !== key);
            const held = () => model.reduce((n, e) => n + e.text.length, 0);
            let refused = false;
            while (held() + text.length > 100) {
              if ((model[0] as { pass: number }).pass === pass) {
                refused = true;
                break;
              }
              model.shift();
            }
            if (!refused) model.push({ key, text, pass });
          }
          expect(cache.size).toBe(model.length);
        }
        for (const e of model) expect(cache.get(e.key)).toBe(e.text);
      }),
      { numRuns: 500 },
    );
  });
});

describe("asciiTrigramKeys", () => {
  it("gives the keys trigramKeysOf gives for the same ASCII text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary-ascii", maxLength: 200 }), (text) => {
        expect([...asciiTrigramKeys(Buffer.from(text, "latin1"))]).toEqual(keysOf(text));
      }),
      { numRuns: 500 },
    );
  });

  it("gives the same keys for a text of more distinct trigrams than its first scratch buffer holds", () => {
    // The scratch buffer grows (twice) from the small document before to ~14,000 distinct keys.
    keysOf("a small document first");
    let seed = 7;
    const text = Array.from({ length: 120_000 }, () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return String.fromCharCode(32 + (seed % 95));
    }).join("");
    const doc = [...asciiTrigramKeys(Buffer.from(text, "latin1"))];
    expect(doc.length).toBeGreaterThan(11_000);
    expect(doc).toEqual(keysOf(text));
  });
});

describe("blockedTrigramKeys", () => {
  const text = fc
    .array(fc.constantFrom("abc", "Hash", "é", "\u212a", "日本", "x", "\n", " ", "\t", "createHash"), {
      maxLength: 400,
    })
    .map((parts) => parts.join(""));
  it("holds every trigram within a block in that block's filter, and the whole text's keys (property)", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 5 }), (t, cuts) => {
        const data = Buffer.from(t, "utf8");
        // Cuts after line ends, as the index makes them.
        const bounds = [0];
        for (let at = data.indexOf(10); at !== -1 && bounds.length <= cuts; at = data.indexOf(10, at + 1)) {
          if (at + 1 < data.length) bounds.push(at + 1);
        }
        bounds.push(data.length);
        if (bounds.length < 3) return;
        const { keys, blooms } = blockedTrigramKeys(data, bounds);
        const all = new Set(keys);
        for (let b = 0; b + 1 < bounds.length; b++) {
          const block = foldText(data.toString("utf8", bounds[b], bounds[b + 1]));
          for (const key of trigramKeys(block)) expect(bloomHas(blooms, b, key)).toBe(true);
          for (const key of keysOf(block)) expect(all.has(key)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("holds exactly the keys of its blocks' texts, none across a cut (property)", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 5 }), (t, cuts) => {
        const data = Buffer.from(t, "utf8");
        const bounds = [0];
        for (let at = data.indexOf(10); at !== -1 && bounds.length <= cuts; at = data.indexOf(10, at + 1)) {
          if (at + 1 < data.length) bounds.push(at + 1);
        }
        bounds.push(data.length);
        const expected = new Set<number>();
        for (let b = 0; b + 1 < bounds.length; b++) {
          const block = data.toString("utf8", bounds[b], bounds[b + 1]);
          for (const key of keysOf(block)) expected.add(key);
        }
        const keys = [...blockedTrigramKeys(data, bounds).keys];
        expect(keys.length).toBe(new Set(keys).size);
        expect(new Set(keys)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
