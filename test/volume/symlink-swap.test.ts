// A symlink swapped in mid-operation (ELOOP from an O_NOFOLLOW open) is PERMISSION_DENIED on every
// surface that touches a directory, like a symlink leading out; a symlink loop met while resolving a
// path stays INVALID_PATH. The swap is made deterministic: node:fs/promises' open is wrapped so that
// the file is replaced by a symlink pointing outside just before afs opens it (after confinement).
import { mkdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Approvals } from "../../src/access/approvals.js";
import { allowConsent } from "../../src/access/consent.js";
import { resolveLimits } from "../../src/access/limits.js";
import { toAfsError } from "../../src/core/errors.js";
import { lines, read } from "../../src/ops/index.js";
import { toRequestError } from "../../src/protocols/acp/errors.js";
import { AcpFiles } from "../../src/protocols/acp/files.js";
import { toBrokerError } from "../../src/protocols/broker/errors.js";
import { BrokerHost } from "../../src/protocols/broker/host.js";
import { fsError } from "../../src/volume/local-dir/errno.js";
import { LocalDirVolume } from "../../src/volume/local-dir/local-dir-volume.js";
import { tempAfs, tempDir } from "../helpers/tmp.js";

// Host paths whose next open first swaps the file there for a symlink to the given target.
const swaps = vi.hoisted(() => new Map<string, string>());

vi.mock("node:fs/promises", async (importOriginal) => {
  const fsp = await importOriginal<typeof import("node:fs/promises")>();
  const open = (async (path: Parameters<typeof fsp.open>[0], ...rest: unknown[]) => {
    const target = swaps.get(String(path));
    if (target !== undefined) {
      swaps.delete(String(path));
      await fsp.rm(String(path), { force: true });
      await fsp.symlink(target, String(path));
    }
    return (fsp.open as (...a: unknown[]) => Promise<unknown>)(path, ...rest);
  }) as typeof fsp.open;
  return { ...fsp, open, default: { ...fsp, open } };
});

const SECRET = "OUTSIDE SECRET\n";

let root: string;
let secret: string;
const cleanups: (() => Promise<void>)[] = [];

beforeEach(async () => {
  const a = await tempDir("afs-swap-root-");
  const b = await tempDir("afs-swap-outside-");
  cleanups.push(a.cleanup, b.cleanup);
  root = join(await realpath(a.dir), "proj");
  await mkdir(root);
  secret = join(await realpath(b.dir), "secret.txt");
  await writeFile(secret, SECRET);
  await writeFile(join(root, "a.txt"), "inside\n");
});
afterEach(async () => {
  swaps.clear();
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A fresh /a.txt whose next open finds a symlink to the outside file instead. */
async function armSwap(): Promise<void> {
  await rm(join(root, "a.txt"), { force: true });
  await writeFile(join(root, "a.txt"), "inside\n");
  swaps.set(join(root, "a.txt"), secret);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return toAfsError(e).code;
  }
  throw new Error("expected the operation to fail, but it succeeded");
}

describe("a symlink swapped in mid-operation", () => {
  it("maps ELOOP to PERMISSION_DENIED in the one errno table, naming the volume path only", () => {
    const err = fsError(Object.assign(new Error("ELOOP: /host/x"), { code: "ELOOP" }), "/a.txt");
    expect(err.code).toBe("PERMISSION_DENIED");
    expect(err.details).toEqual({ path: "/a.txt" });
    expect(err.message).not.toContain("/host");
  });

  it("is refused by every read of a directory volume, and a symlink loop stays INVALID_PATH", async () => {
    const volume = await LocalDirVolume.open(root);
    const reads: [string, () => Promise<unknown>][] = [
      ["readFile", () => volume.readFile("/a.txt")],
      ["openFile", () => volume.openFile("/a.txt")],
      ["stat", () => volume.stat("/a.txt")],
      ["read", () => read(volume, { path: "/a.txt" })],
      ["lines", () => lines(volume, { path: "/a.txt", start: 1, end: 1 })],
    ];
    for (const [name, run] of reads) {
      await armSwap();
      expect(`${name}: ${await codeOf(run())}`).toBe(`${name}: PERMISSION_DENIED`);
      expect(swaps.size, `${name} opened the file`).toBe(0);
    }
    await symlink("loop-b", join(root, "loop-a"));
    await symlink("loop-a", join(root, "loop-b"));
    expect(await codeOf(volume.readFile("/loop-a"))).toBe("INVALID_PATH");
    expect(await readFile(secret, "utf8")).toBe(SECRET);
  });

  it("is PERMISSION_DENIED (-31002) on the broker's wire, for a directory root", async () => {
    const { afs, cleanup } = await tempAfs();
    cleanups.push(cleanup);
    for (const [spec, dir] of [[{ dir: root }, root]] as const) {
      const host = await BrokerHost.open({ afs, roots: [spec], consent: allowConsent() });
      try {
        await host.handle("srv", "files/consent", { message: "m", requestedPaths: ["."] });
        swaps.set(join(dir, "a.txt"), secret);
        const error = await host.handle("srv", "files/read", { path: "a.txt" }).then(
          () => null,
          (e: unknown) => toBrokerError(e),
        );
        expect(error).toMatchObject({
          code: -31002,
          data: { code: "PERMISSION_DENIED", afsCode: "PERMISSION_DENIED", path: "/a.txt" },
        });
        expect(error?.message).not.toContain("SECRET");
        expect(swaps.size).toBe(0);
      } finally {
        await host.close();
      }
    }
  });

  it("is PERMISSION_DENIED (-32602, data.code) on ACP's fs/read_text_file", async () => {
    const files = new AcpFiles({ limits: resolveLimits({}, {}), approvals: new Approvals("allow", {}) });
    const session = await files.addSession(async () => "s-1", root);
    await armSwap();
    const error = await files.readTextFile({ sessionId: session, path: join(root, "a.txt") }).then(
      () => null,
      (e: unknown) => toRequestError(e),
    );
    expect(error).toMatchObject({ code: -32602, data: { code: "PERMISSION_DENIED" } });
    expect(swaps.size).toBe(0);
  });
});
