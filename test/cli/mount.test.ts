// `afs mount`, `afs unmount` and the mounts in `afs status`, through the built executable: the sync
// runs in a detached process of its own, so every test stops what it started and the last one checks
// that no mount process of this file is left.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, gone, killAll, until } from "./mount-processes.js";
import { type Cli, cli, ensureBuilt } from "./run.js";

interface Listing {
  workspace: string;
  readonly: boolean;
  dir: string;
  state: string;
  pid: number | null;
  pending: number;
  conflicts: number;
  last_sync: string | null;
  last_error: string | null;
}

let afs: Cli;
/** Every mount process a test saw, killed at the end whatever happened. */
const pids = new Set<number>();

const mounts = (): Listing[] => {
  const list = afs.json<{ mounts: Listing[] }>(["status"]).mounts;
  for (const m of list) if (m.pid !== null) pids.add(m.pid);
  return list;
};
const mountOf = (dir: string): Listing | undefined => mounts().find((m) => m.dir === dir);
const cat = (workspace: string, path: string): string | null => {
  const r = afs.run(["fs", "cat", "-w", workspace, path]);
  return r.status === 0 ? r.stdout : null;
};
const read = (file: string): string | null => (existsSync(file) ? readFileSync(file, "utf8") : null);

/** Mounts and expects success, returning the mount's listing (its process noted for cleanup). */
function mount(args: readonly string[]): Listing & { started: boolean } {
  const m = afs.json<Listing & { started: boolean }>(["mount", ...args]);
  if (m.pid !== null) pids.add(m.pid);
  return m;
}

/** A new directory holding `files`. */
function dirWith(name: string, files: Record<string, string>): string {
  const dir = afs.tmp(name);
  mkdirSync(dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  return dir;
}

beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
});

afterAll(async () => {
  killAll(pids);
  await afs.cleanup();
});

describe("afs mount", () => {
  it("creates the workspace from an existing directory and keeps both in step until unmounted", async () => {
    const dir = dirWith("one", { "a.txt": "first\n" });
    const m = mount(["one", dir]);
    expect(m).toMatchObject({ workspace: "one", dir, state: "running", started: true });
    expect(m.pid).toBeGreaterThan(0);
    expect(cat("one", "/a.txt")).toBe("first\n");

    const listed = mountOf(dir);
    expect(listed).toMatchObject({ workspace: "one", state: "running", pid: m.pid, conflicts: 0 });
    expect(listed?.last_sync).not.toBeNull();
    expect(afs.ok(["status"])).toContain(`one on ${dir}: running pid ${m.pid}`);

    writeFileSync(join(dir, "a.txt"), "edited on disk\n");
    await until("the local edit is in the workspace", () => cat("one", "/a.txt") === "edited on disk\n");
    afs.ok(["fs", "write", "-w", "one", "/b.txt", "--content", "written in afs\n"]);
    await until("the workspace's write is on disk", () => read(join(dir, "b.txt")) === "written in afs\n");

    // Mounting again while it runs starts nothing.
    const again = mount(["one", dir]);
    expect(again).toMatchObject({ started: false, pid: m.pid });

    const pid = m.pid as number;
    const un = afs.json<{ unmounted: Listing[] }>(["unmount", dir]);
    expect(un.unmounted).toMatchObject([{ workspace: "one", dir, state: "stopped" }]);
    await gone(pid);
    expect(read(join(dir, "a.txt"))).toBe("edited on disk\n");
    expect(read(join(dir, "b.txt"))).toBe("written in afs\n");
    expect(mountOf(dir)).toBeUndefined();
  });

  it("records a mount's uploads as USER@HOST through the mount surface, unless AFS_ACTOR names someone", async () => {
    const dir = dirWith("who", { "a.txt": "first\n" });
    // The runs' AFS_ACTOR (tester) emptied: the mount process names the machine's user and host.
    const r = afs.run(["mount", "who", dir, "--json"], { env: { AFS_ACTOR: "" } });
    expect(r.status).toBe(0);
    const m = JSON.parse(r.stdout) as Listing;
    pids.add(m.pid as number);
    writeFileSync(join(dir, "a.txt"), "edited on disk\n");
    await until("the local edit is in the workspace", () => cat("who", "/a.txt") === "edited on disk\n");
    const log = afs.json<{ actor: string; surface: string; op: string }[]>(["log", "-w", "who", "--path", "/a.txt"]);
    expect(log[0]).toMatchObject({ actor: `${userInfo().username}@${hostname()}`, surface: "mount" });
    afs.ok(["unmount", dir]);
    await gone(m.pid as number);
  });

  it("refuses a first mount where both sides hold differing files, naming --prefer; --prefer local mounts", async () => {
    afs.ok(["ws", "create", "two"]);
    afs.ok(["fs", "write", "-w", "two", "/same.txt", "--content", "remote\n"]);
    const dir = dirWith("two", { "same.txt": "local\n" });
    const refused = afs.run(["mount", "two", dir]);
    expect(refused.status).toBe(4);
    expect(refused.stderr).toContain("/same.txt");
    expect(refused.stderr).toContain("--prefer");
    expect(mountOf(dir)).toBeUndefined();
    expect(read(join(dir, "same.txt"))).toBe("local\n");

    const m = mount(["two", dir, "--prefer", "local"]);
    expect(m).toMatchObject({ state: "running", conflicts: 1 });
    expect(cat("two", "/same.txt")).toBe("local\n");
    expect(read(join(dir, "same.txt"))).toBe("local\n");
    afs.ok(["unmount", "two"]);
    await gone(m.pid as number);
  });

  it("catches up both sides' edits after its process was killed, when mounted again", async () => {
    const dir = dirWith("three", { "keep.txt": "kept\n" });
    const first = mount(["three", dir]);
    const pid = first.pid as number;
    process.kill(pid, "SIGKILL");
    await until("the killed mount shows stopped", () => !alive(pid) && mountOf(dir)?.state === "stopped");
    expect(mountOf(dir)?.pid).toBeNull();

    writeFileSync(join(dir, "local.txt"), "made while down\n");
    afs.ok(["fs", "write", "-w", "three", "/remote.txt", "--content", "made meanwhile\n"]);
    const again = mount(["three", dir]);
    expect(again).toMatchObject({ started: true, state: "running" });
    expect(again.pid).not.toBe(pid);
    expect(read(join(dir, "remote.txt"))).toBe("made meanwhile\n");
    expect(cat("three", "/local.txt")).toBe("made while down\n");
    afs.ok(["unmount", dir]);
    await gone(again.pid as number);
  });

  it("unmounting a mount whose process was killed uploads the edits made since, then forgets it", async () => {
    const dir = dirWith("five", { "a.txt": "a\n" });
    const m = mount(["five", dir]);
    const pid = m.pid as number;
    process.kill(pid, "SIGKILL");
    await until("the killed mount's process is gone", () => !alive(pid));
    writeFileSync(join(dir, "late.txt"), "after the kill\n");
    const un = afs.json<{ unmounted: Listing[] }>(["unmount", "five"]);
    expect(un.unmounted).toMatchObject([{ workspace: "five", dir, state: "stopped", pid: null }]);
    expect(cat("five", "/late.txt")).toBe("after the kill\n");
    expect(mountOf(dir)).toBeUndefined();
  });

  it("--readonly: the directory follows the workspace, and a local edit is not uploaded", async () => {
    afs.ok(["ws", "create", "six"]);
    afs.ok(["fs", "write", "-w", "six", "/r.txt", "--content", "from afs\n"]);
    const dir = afs.tmp("six");
    const m = mount(["six", dir, "--readonly"]);
    expect(m).toMatchObject({ readonly: true, state: "running" });
    expect(read(join(dir, "r.txt"))).toBe("from afs\n");
    afs.ok(["fs", "write", "-w", "six", "/s.txt", "--content", "later\n"]);
    await until("the workspace's write is on disk", () => read(join(dir, "s.txt")) === "later\n");
    writeFileSync(join(dir, "local.txt"), "stays here\n");
    await until("the local edit is counted as pending", () => (mountOf(dir)?.pending ?? 0) > 0);
    afs.ok(["unmount", dir]);
    await gone(m.pid as number);
    expect(cat("six", "/local.txt")).toBeNull();
    expect(read(join(dir, "local.txt"))).toBe("stays here\n");
  });

  it("shows the error a restart ended on, and unmount still forgets a mount whose workspace was deleted", async () => {
    const dir = dirWith("seven", { "a.txt": "a\n" });
    const m = mount(["seven", dir]);
    const pid = m.pid as number;
    process.kill(pid, "SIGKILL");
    await until("the killed mount's process is gone", () => !alive(pid));
    afs.ok(["ws", "delete", "seven"]);
    const again = afs.run(["mount", "seven", dir]);
    expect(again.status).toBe(3);
    expect(mountOf(dir)).toMatchObject({ state: "error", pid: null, last_error: expect.stringContaining("seven") });
    afs.ok(["unmount", dir]);
    expect(mountOf(dir)).toBeUndefined();
    expect(read(join(dir, "a.txt"))).toBe("a\n");
  });

  it("says what is mounted when asked to unmount something that is not", async () => {
    const dir = dirWith("four", { "x.txt": "x\n" });
    const m = mount(["four", dir]);
    const r = afs.run(["unmount", afs.tmp("nowhere")]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain("NOT_FOUND");
    expect(r.stderr).toContain(`four on ${dir}`);
    afs.ok(["unmount", "four"]);
    await gone(m.pid as number);
  });

  it("leaves no mount process behind", () => {
    for (const pid of pids) expect(alive(pid)).toBe(false);
    const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
    expect(ps.split("\n").filter((line) => line.includes("mount-run") && line.includes(afs.tmp("")))).toEqual([]);
  });
});
