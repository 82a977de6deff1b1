import { describe, expect, it } from "vitest";
import { grepText } from "./grep-text.js";

describe("grepText", () => {
  it("merges touching context, and puts -- at a gap and between files", () => {
    const lines = grepText({
      mode: "matches",
      matches: [
        { path: "/a", line: 2, text: "x", before: ["one"], after: ["three"] },
        { path: "/a", line: 3, text: "three", before: ["x"], after: [] },
        { path: "/a", line: 9, text: "y", before: ["eight"], after: [] },
        { path: "/b", line: 1, text: "z", before: [], after: ["two"] },
      ],
    });
    expect(lines).toEqual([
      "/a-1-one",
      "/a:2:x",
      "/a:3:three",
      "--",
      "/a-8-eight",
      "/a:9:y",
      "--",
      "/b:1:z",
      "/b-2-two",
    ]);
  });
});
