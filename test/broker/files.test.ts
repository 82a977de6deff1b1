// files/* semantics on both kinds of root (a directory and an afs workspace): utf-8 slices never
// split a character, binary needs base64, chunked writes appear whole, expectedSha256 conflicts,
// pagination, a 50 MiB round trip by 1 MiB chunks, and watches seeing changes made outside the broker.
import { createHash, randomBytes } from "node:crypto";
import { appendFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { allowConsent } from "../../src/access/consent.js";
import { BrokerHost } from "../../src/protocols/broker/host.js";
import type { Afs } from "../../src/workspace/afs.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";
import { call, until } from "./fixture.js";

interface Kind {
  name: string;
  /** Opens a host over a fresh root; `disk` writes a file behind the broker's back. */
  setup(): Promise<{ host: BrokerHost; disk: Disk; cleanup: () => Promise<void> }>;
}
interface Disk {
  write(path: string, data: string | Buffer): Promise<void>;
  append(path: string, data: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  remove(path: string): Promise<void>;
}

const KINDS: Kind[] = [
  {
    name: "directory root",
    async setup() {
      const t = await tempDir("afs-broker-files-");
      const host = await BrokerHost.open({ roots: [{ dir: t.dir }], consent: allowConsent(), maxListEntries: 2 });
      const at = (p: string): string => join(t.dir, p);
      const disk: Disk = {
        write: (p, d) => writeFile(at(p), d),
        append: (p, d) => appendFile(at(p), d),
        rename: (a, b) => rename(at(a), at(b)),
        remove: (p) => rm(at(p)),
      };
      return {
        host,
        disk,
        cleanup: async () => {
          await host.close();
          await t.cleanup();
        },
      };
    },
  },
  {
    name: "workspace root",
    async setup() {
      const t = await tempAfs();
      const afs: Afs = t.afs;
      await afs.workspaces.create("ws");
      const host = await BrokerHost.open({
        afs,
        roots: [{ workspace: "ws" }],
        consent: allowConsent(),
        maxListEntries: 2,
      });
      const vol = await afs.workspaces.volume("ws", "someone-else");
      const disk: Disk = {
        // Volume paths are absolute inside the workspace.
        write: async (p, d) => void (await vol.writeFile(`/${p}`, Buffer.from(d), { op: "write" })),
        append: async (p, d) =>
          void (await vol.writeFile(`/${p}`, Buffer.concat([await vol.readFile(`/${p}`), Buffer.from(d)]), {
            op: "write",
          })),
        rename: async (a, b) => void (await vol.rename(`/${a}`, `/${b}`, {})),
        remove: async (p) => void (await vol.remove(`/${p}`, {})),
      };
      return {
        host,
        disk,
        cleanup: async () => {
          await host.close();
          await t.cleanup();
        },
      };
    },
  },
];

for (const kind of KINDS) {
  describe(kind.name, () => {
    let host: BrokerHost;
    let disk: Disk;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ host, disk, cleanup } = await kind.setup());
      expect((await call(host, "files/consent", { message: "m", requestedPaths: ["."] })).ok).toBe(true);
    });
    afterEach(() => cleanup());

    it("reads utf-8 without splitting a character, and binary only as base64", async () => {
      await disk.write("t.txt", "aé€😀");
      const r = await call(host, "files/read", { path: "t.txt", length: 2 });
      expect(r.ok && r.result).toMatchObject({ content: "a", offset: 0, length: 1, eof: false, size: 10 });
      const tail = await call(host, "files/read", { path: "t.txt", offset: 1 });
      expect(tail.ok && tail.result).toMatchObject({ content: "é€😀", eof: true, mimeType: "text/plain" });
      const tiny = await call(host, "files/read", { path: "t.txt", offset: 6, length: 2 });
      expect(!tiny.ok && tiny.error.message).toMatch(/base64/);
      await disk.write("b.bin", Buffer.from([1, 0, 2, 255]));
      const bin = await call(host, "files/read", { path: "b.bin" });
      expect(!bin.ok && bin.error).toMatchObject({
        code: -31003,
        data: { code: "INVALID_PATH", afsCode: "INVALID_ARGUMENT" },
      });
      expect(!bin.ok && bin.error.message).toMatch(/base64/);
      const b64 = await call(host, "files/read", { path: "b.bin", encoding: "base64" });
      expect(b64.ok && b64.result.content).toBe(Buffer.from([1, 0, 2, 255]).toString("base64"));
    });

    it("writes atomically, refuses create:false on a missing file and detects concurrent change", async () => {
      const missing = await call(host, "files/write", { path: "n.txt", content: "x", create: false });
      expect(!missing.ok && missing.error).toMatchObject({ code: -31001, data: { code: "FILE_NOT_FOUND" } });
      const w = await call(host, "files/write", { path: "n.txt", content: "one" });
      const sha = w.ok ? String(w.result.sha256) : "";
      await disk.write("n.txt", "changed behind the broker");
      const stale = await call(host, "files/write", { path: "n.txt", content: "two", expectedSha256: sha });
      expect(!stale.ok && stale.error).toMatchObject({ code: -31006, data: { code: "CONCURRENCY_CONFLICT" } });
      expect(JSON.stringify(stale)).not.toContain("changed behind");
    });

    it("creates, lists with pages, renames and deletes", async () => {
      for (const [path, type] of [
        ["d", "directory"],
        ["d/x.txt", "file"],
        ["d/y.txt", "file"],
        ["d/.h", "file"],
      ]) {
        expect((await call(host, "files/create", { path, type })).ok).toBe(true);
      }
      const first = await call(host, "files/list", { path: "d" });
      expect(first.ok && first.result.entries).toHaveLength(2);
      const more = await call(host, "files/list", { path: "d", includeHidden: true, cursor: "2" });
      expect(more.ok && (more.result.entries as { path: string }[]).map((e) => e.path)).toEqual(["d/y.txt"]);
      expect((await call(host, "files/rename", { oldPath: "d/x.txt", newPath: "d/z.txt" })).ok).toBe(true);
      const notEmpty = await call(host, "files/delete", { path: "d" });
      expect(notEmpty.ok).toBe(false);
      expect((await call(host, "files/delete", { path: "d", recursive: true })).ok).toBe(true);
      const gone = await call(host, "files/read", { path: "d/z.txt" });
      expect(!gone.ok && gone.error.data.code).toBe("FILE_NOT_FOUND");
    });

    it("round-trips a binary file by 1 MiB chunks with an equal SHA-256", async () => {
      const size = kind.name === "directory root" ? 50 * 1024 * 1024 : 4 * 1024 * 1024 + 123;
      const data = randomBytes(size);
      const MiB = 1024 * 1024;
      for (let off = 0; off < size; off += MiB) {
        const chunk = data.subarray(off, off + MiB);
        const final = off + MiB >= size;
        const r = await call(host, "files/write", {
          path: "big.bin",
          content: chunk.toString("base64"),
          encoding: "base64",
          offset: off,
          final,
        });
        expect(r.ok && r.result.done).toBe(final);
        if (!final) expect((await call(host, "files/read", { path: "big.bin" })).ok).toBe(false); // not visible yet
      }
      const hash = createHash("sha256");
      let shaSeen = "";
      for (let off = 0, eof = false; !eof; ) {
        const r = await call(host, "files/read", { path: "big.bin", encoding: "base64", offset: off });
        if (!r.ok) throw new Error(r.error.message);
        hash.update(Buffer.from(String(r.result.content), "base64"));
        off += Number(r.result.length);
        eof = r.result.eof === true;
        shaSeen = String(r.result.sha256);
      }
      const expected = createHash("sha256").update(data).digest("hex");
      expect(hash.digest("hex")).toBe(expected);
      expect(shaSeen).toBe(expected);
    });

    it("watches changes made outside the broker: created, modified, deleted, a rename as deleted + created", async () => {
      const seen: string[] = [];
      host.onNotification((server, method, p) => {
        expect([server, method]).toEqual(["srv", "notifications/files/changed"]);
        seen.push(`${p.event} ${p.path}`);
      });
      await disk.write("keep.txt", "k");
      const w = await call(host, "files/watch", { path: ".", recursive: true });
      expect(w.ok).toBe(true);
      await disk.write("w.txt", "1");
      await until(() => seen.includes("created w.txt"));
      await new Promise((r) => setTimeout(r, 20)); // a new mtime, even on coarse clocks
      await disk.append("w.txt", "2");
      await until(() => seen.includes("modified w.txt"));
      await disk.rename("w.txt", "v.txt");
      await until(() => seen.includes("deleted w.txt") && seen.includes("created v.txt"));
      await disk.remove("v.txt");
      await until(() => seen.includes("deleted v.txt"));
      expect(seen.some((s) => s.includes("keep.txt"))).toBe(false);
      expect((await call(host, "files/unwatch", { watchId: w.ok ? w.result.watchId : "" })).ok).toBe(true);
      await disk.write("after.txt", "x");
      await new Promise((r) => setTimeout(r, 300));
      expect(seen.some((s) => s.includes("after.txt"))).toBe(false);
    });
  });
}
