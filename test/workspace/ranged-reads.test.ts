// Ranged reads on a file stored in chunks, through every kind of volume: file_lines (streamed, as for
// any file over SMALL_FILE_BYTES), ACP windows, byte ranges and grep answer what the whole text says,
// with a multi-byte character split by the first chunk boundary and a CRLF split by the second.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Approvals } from "../../src/access/approvals.js";
import { resolveLimits } from "../../src/access/limits.js";
import { sha256 } from "../../src/core/hash.js";
import { type GrepOptions, grep } from "../../src/ops/grep.js";
import { lines, linesOf, SMALL_FILE_BYTES } from "../../src/ops/lines.js";
import { AcpFiles } from "../../src/protocols/acp/files.js";
import { CHUNK_BYTES } from "../../src/store/chunking.js";
import { LocalDirVolume } from "../../src/volume/local-dir/local-dir-volume.js";
import type { OpenFile, Volume } from "../../src/volume/volume.js";
import type { Afs } from "../../src/workspace/afs.js";
import { indexesOf } from "../helpers/search-indexes.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";

/** ASCII lines of exactly `n` bytes in all (n ≥ 1), each ending in "\n". */
function fill(n: number, tag: string): string {
  const out: string[] = [];
  let left = n;
  for (let i = 0; left > 0; i++) {
    const line = `${tag} line ${i} ${"-".repeat(i % 70)}\n`;
    const take = line.length <= left - 1 || line.length === left ? line : `${"=".repeat(left - 1)}\n`;
    out.push(take);
    left -= take.length;
  }
  return out.join("");
}

// "€" (3 bytes) starts one byte before the first chunk boundary; "\r" is the last byte of the
// second chunk and its "\n" the first of the third; the file ends without a newline.
const C = CHUNK_BYTES;
const part1 = `${fill(C - 3, "a")}ab€cd\r\n`;
const part2 = `${fill(2 * C - 1 - Buffer.byteLength(part1) - 1, "b")}x\r\n`;
const TEXT = `${part1}${part2}${fill(300_000, "c")}é𝄞 the end`;
const DATA = Buffer.from(TEXT, "utf8");
const ALL = linesOf(TEXT);
const lineAt = (offset: number): number => linesOf(DATA.subarray(0, offset).toString("utf8")).length;

describe("ranged reads of a chunked file", () => {
  let afs: Afs;
  /** Each volume, with the home's search indexes for the workspace ones (as the tools pass them). */
  const volumes: [string, Volume, GrepOptions?][] = [];
  const cleanups: (() => Promise<void>)[] = [];
  let dir: string;

  beforeAll(async () => {
    expect(DATA[C - 1]).toBe(0xe2); // "€" straddles the first boundary
    expect(DATA.subarray(2 * C - 1, 2 * C + 1).toString()).toBe("\r\n");
    expect(DATA.length).toBeGreaterThan(SMALL_FILE_BYTES);
    const a = await tempAfs();
    const d = await tempDir("afs-ranged-");
    cleanups.push(a.cleanup, d.cleanup);
    afs = a.afs;
    dir = join(d.dir, "proj");
    await mkdir(dir);
    await writeFile(join(dir, "big.txt"), DATA);
    await afs.workspaces.import("ws", dir);
    volumes.push(["workspace", await afs.workspaces.volume("ws"), indexesOf(afs)]);
    volumes.push(["directory", await LocalDirVolume.open(dir)]);
  }, 60_000);
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  const euroLine = lineAt(C - 1) + 1;
  const crlfLine = lineAt(2 * C - 1) + 1;
  const WINDOWS: [number, number][] = [
    [1, 3],
    [euroLine - 1, euroLine + 1],
    [euroLine, euroLine],
    [crlfLine - 2, crlfLine + 2],
    [ALL.length - 2, -1],
    [ALL.length, ALL.length + 5],
    [ALL.length + 1, -1],
  ];

  it("file_lines answers what splitting the whole text answers, on every volume", async () => {
    for (const [name, volume] of volumes) {
      for (const [start, end] of WINDOWS) {
        const r = await lines(volume, { path: "/big.txt", start, end });
        const last = end === -1 ? ALL.length : Math.min(end, ALL.length);
        expect(r, `${name} ${start}-${end}`).toMatchObject({
          total_lines: ALL.length,
          end: start > ALL.length ? start - 1 : last,
          content: ALL.slice(start - 1, last).join(""),
          sha256: sha256(DATA),
        });
      }
      expect(ALL[ALL.length - 1]).toBe("é𝄞 the end");
    }
  });

  it("reads a window of a text it has counted before only as far as the window's end", async () => {
    for (const [name, volume] of volumes) {
      let streamed = 0;
      // The volume as it is, but counting the bytes a file_lines call streams.
      const counting: Volume = Object.assign(Object.create(volume) as Volume, {
        openFile: async (path: string): Promise<OpenFile> => {
          const file = await volume.openFile(path);
          return Object.assign(Object.create(file) as OpenFile, {
            stream: async function* (): AsyncIterable<Buffer> {
              for await (const piece of file.stream()) {
                streamed += piece.length;
                yield piece;
              }
            },
          });
        },
      });
      await lines(volume, { path: "/big.txt", start: 1, end: 1 });
      const r = await lines(counting, { path: "/big.txt", start: 2, end: 3 });
      expect(r, name).toMatchObject({
        total_lines: ALL.length,
        content: ALL.slice(1, 3).join(""),
        sha256: sha256(DATA),
      });
      // A workspace names its files' content hashes, so their line counts are remembered; a plain
      // directory's file could have changed, and is read to the end again (for total_lines and the hash).
      if (name === "directory") expect(streamed).toBe(DATA.length);
      else expect(streamed, name).toBeLessThanOrEqual(C); // the first chunk, of three
    }
  });

  it("refuses a window over the content cap without building it", async () => {
    for (const [name, volume] of volumes) {
      await expect(
        lines(volume, { path: "/big.txt", start: 1 }, { maxContentBytes: 1000 }),
        name,
      ).rejects.toMatchObject({ code: "QUOTA_EXCEEDED", details: { size: DATA.length } });
    }
  });

  it("reads byte ranges across chunk boundaries, and streams the whole file", async () => {
    for (const [name, volume] of volumes) {
      const file = await volume.openFile("/big.txt");
      try {
        expect(file.size, name).toBe(DATA.length);
        for (const [offset, length] of [
          [C - 2, 5],
          [0, 10],
          [2 * C - 100, 200],
          [DATA.length - 5, 100],
          [DATA.length + 5, 10],
        ] as const) {
          expect(
            (await file.read(offset, length)).equals(DATA.subarray(offset, offset + length)),
            `${name} ${offset}`,
          ).toBe(true);
        }
        const pieces: Buffer[] = [];
        for await (const piece of file.stream()) pieces.push(piece);
        expect(Buffer.concat(pieces).equals(DATA), name).toBe(true);
      } finally {
        await file.close();
      }
    }
  });

  it("grep finds the lines around the boundaries as on a small file", async () => {
    for (const [name, volume, options] of volumes) {
      for (const pattern of ["ab€cd", "x", "the end"]) {
        const r = await grep(volume, { path: "/", pattern }, options);
        const want = ALL.flatMap((l, i) => (l.includes(pattern) ? [i + 1] : []));
        expect(r.mode === "matches" && r.matches.map((m) => m.line), `${name} ${JSON.stringify(pattern)}`).toEqual(
          want,
        );
      }
    }
  });

  it("ACP windows stream the file and give the same lines; a whole read over the cap is refused", async () => {
    for (const [name, volume] of volumes) {
      const files = new AcpFiles({
        limits: resolveLimits({ maxTextFileBytes: 1024 * 1024 }, {}),
        approvals: new Approvals("deny"),
        openVolume: async () => volume,
      });
      const session = await files.addSession(async () => "s", dir);
      const path = join(dir, "big.txt");
      for (const [line, limit] of [
        [euroLine, 2],
        [crlfLine - 1, 3],
        [ALL.length, 10],
        [ALL.length + 3, 1],
        [5, 0],
      ] as const) {
        const { content } = await files.readTextFile({ sessionId: session, path, line, limit });
        expect(content, `${name} ${line}+${limit}`).toBe(ALL.slice(line - 1, line - 1 + limit).join(""));
      }
      await expect(files.readTextFile({ sessionId: session, path }), name).rejects.toMatchObject({
        code: "QUOTA_EXCEEDED",
        details: { size: DATA.length },
      });
      await expect(files.readTextFile({ sessionId: session, path, line: 1 }), name).rejects.toMatchObject({
        code: "QUOTA_EXCEEDED",
      });
    }
  });
});
