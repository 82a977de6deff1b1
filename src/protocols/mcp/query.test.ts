import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { tempAfs } from "../../../test/helpers/tmp.js";
import { write } from "../../ops/index.js";
import type { Afs } from "../../workspace/afs.js";
import { query, tokenize } from "./query.js";

let t: { afs: Afs; cleanup: () => Promise<void> };
beforeEach(async () => {
  t = await tempAfs();
  await t.afs.createWorkspace("q");
});
afterEach(() => t.cleanup());

const seed = async (files: Record<string, string>) => {
  const volume = await t.afs.volume("q");
  for (const [path, content] of Object.entries(files)) await write(volume, { path, content });
  return volume;
};
const opts = { maxFileBytes: 1024 * 1024 };

describe("query", () => {
  it("splits identifiers into words", () => {
    expect(tokenize("parseConfig HTTPServer snake_case x2")).toEqual([
      "parse",
      "config",
      "http",
      "server",
      "snake",
      "case",
      "x2",
    ]);
  });

  it("a rare word outweighs a common one", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 8; i++) files[`/common${i}.txt`] = "the error happened\n";
    files["/rare.txt"] = "a checksum mismatch\n";
    files["/both.txt"] = "error: checksum mismatch\n";
    const volume = await seed(files);
    const r = await query(volume, { query: "checksum error" }, opts);
    expect(r.results.map((h) => h.path).slice(0, 2)).toEqual(["/both.txt", "/rare.txt"]);
    expect(r.results[1]?.score).toBeGreaterThan(r.results[2]?.score ?? 0);
  });

  it("reports the matched lines of a chunk, skips binary files, honours limit and min_score", async () => {
    const lines = Array.from({ length: 45 }, (_, i) => (i === 24 ? "the scheduler picks a worker" : `line ${i + 1}`));
    const volume = await seed({ "/long.txt": `${lines.join("\n")}\n` });
    await volume.writeFile("/bin.dat", Buffer.from([0, 115, 99, 104, 101, 100, 117, 108, 101, 114]), { op: "write" });
    const r = await query(volume, { query: "scheduler worker" }, opts);
    expect(r.results).toHaveLength(1);
    expect(r.results[0]).toMatchObject({ path: "/long.txt", start_line: 25, end_line: 25 });
    expect(r.results[0]?.snippet).toBe("line 24\nthe scheduler picks a worker\nline 26");
    expect((await query(volume, { query: "line", limit: 2 }, opts)).truncated).toBe(true);
    expect((await query(volume, { query: "scheduler", min_score: 1e9 }, opts)).results).toEqual([]);
  });

  it("needs a word and an existing path", async () => {
    const volume = await seed({ "/a.txt": "a\n" });
    await expect(query(volume, { query: "!!" }, opts)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(query(volume, { query: "a", path: "/nope" }, opts)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
