// `afs run`: a command in a mounted directory between two checkpoints, through the built executable.
// Its changes reach the workspace through the mount's background sync, so every test unmounts what
// it mounted and the last one checks that no mount process of this file is left.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alive, gone, killAll, until } from "./mount-processes.js";
import { type Cli, cli, ensureBuilt, MAIN, type Run } from "./run.js";

interface Listing {
  workspace: string;
  dir: string;
  state: string;
  pid: number | null;
}

interface RunResult {
  workspace: string;
  dir: string;
  status: number;
  mounted: boolean;
  before: string;
  before_created: boolean;
  after: string | null;
  changed: boolean;
  summary: { added: number; modified: number; deleted: number; renamed: number };
  undo: string | null;
}

interface Checkpoint {
  name: string;
  kind: string;
  description: string;
}

let afs: Cli;
/** Every mount process a test saw, killed at the end whatever happened. */
const pids = new Set<number>();

/** `afs …args` from the directory `cwd` (the harness runs from its temp dir). */
function afsIn(cwd: string, args: readonly string[]): Run {
  const r = spawnSync(process.execPath, [MAIN, ...args], { env: afs.env, cwd, input: "" });
  if (r.error) throw r.error;
  return { status: r.status ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString(), raw: r.stdout };
}

/** `afs run --json …args`: the flag goes before `--`, where afs reads it. */
function runJson(args: readonly string[]): RunResult {
  const r = afs.run(["run", "--json", ...args]);
  if (r.status !== 0) throw new Error(`afs run ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as RunResult;
}

const mountOf = (dir: string): Listing | undefined => {
  const list = afs.json<{ mounts: Listing[] }>(["status"]).mounts;
  for (const m of list) if (m.pid !== null) pids.add(m.pid);
  return list.find((m) => m.dir === dir);
};

const checkpoints = (ws: string): Checkpoint[] => afs.json<Checkpoint[]>(["cp", "list", "-w", ws]);

const cat = (workspace: string, path: string): string | null => {
  const r = afs.run(["fs", "cat", "-w", workspace, path]);
  return r.status === 0 ? r.stdout : null;
};

/** Every file under `dir` with its content ("sub/x.txt" → text), directories as "sub/". */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const abs = join(d, name);
      const rel = relative(dir, abs);
      if (statSync(abs).isDirectory()) {
        out[`${rel}/`] = "";
        walk(abs);
      } else out[rel] = readFileSync(abs, "utf8");
    }
  };
  walk(dir);
  return out;
}

/** The workspace's files as `tree` lists a directory's. */
function workspaceTree(ws: string): Record<string, string> {
  const out: Record<string, string> = {};
  const { items } = afs.json<{ items: { path: string; kind: string }[] }>(["fs", "ls", "/", "--depth", "10", "-w", ws]);
  for (const e of items) {
    const rel = e.path.slice(1);
    out[e.kind === "dir" ? `${rel}/` : rel] = e.kind === "dir" ? "" : (cat(ws, e.path) ?? "<unreadable>");
  }
  return out;
}

function dirWith(name: string, files: Record<string, string>): string {
  const dir = afs.tmp(name);
  mkdirSync(dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content);
  return dir;
}

function mount(ws: string, dir: string): number {
  const m = afs.json<Listing>(["mount", ws, dir]);
  pids.add(m.pid as number);
  return m.pid as number;
}

async function unmount(dir: string, pid: number): Promise<void> {
  afs.ok(["unmount", dir]);
  await gone(pid);
  expect(mountOf(dir)).toBeUndefined();
}

beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  // Every command in its own process (fs ls would otherwise start a resident afs), mount processes too.
  afs.env.AFS_DAEMON = "off";
});

afterAll(async () => {
  killAll(pids);
  await afs.cleanup();
});

describe("afs run", () => {
  it("checkpoints a command's creates, edits and deletes, passes its exit status on, and the printed restore undoes it", async () => {
    const dir = dirWith("work", { "a.txt": "a\n", "b.txt": "b\n", "keep.txt": "keep\n" });
    const pid = mount("work", dir);
    const start = tree(dir);
    expect(workspaceTree("work")).toEqual(start);

    // Made just before the command ends, and read back at once: the run's flush, not the sync's pace, is what the checkpoint holds.
    const script = "echo new > c.txt; mkdir d; echo deep > d/e.txt; echo more >> a.txt; rm b.txt; exit 3";
    const r = afs.run(["run", "--dir", dir, "--", "sh", "-c", script]);
    expect(r.status).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("sh exited with status 3");
    expect(r.stderr).toContain("2 added, 1 modified, 1 deleted in work");
    const undo = /undo with: (afs cp restore (\S+) -w work)\n/.exec(r.stderr);
    expect(undo, r.stderr).not.toBeNull();
    const before = undo?.[2] as string;
    const after = /checkpoints \S+ \(before\) and (\S+) \(after\)/.exec(r.stderr)?.[1] as string;

    const done = { "a.txt": "a\nmore\n", "c.txt": "new\n", "d/": "", "d/e.txt": "deep\n", "keep.txt": "keep\n" };
    expect(tree(dir)).toEqual(done);
    expect(workspaceTree("work")).toEqual(done);
    const list = checkpoints("work");
    expect(list[0]).toMatchObject({ name: after, kind: "auto", description: `sh -c '${script}'` });
    // The mount's first upload was live work not yet checkpointed: the run saved it first.
    expect(list.find((c) => c.name === before)).toMatchObject({
      kind: "auto",
      description: `before: sh -c '${script}'`,
    });
    expect(mountOf(dir)).toMatchObject({ state: "running", pid });

    // A clean workspace: the head is the point to go back to, no checkpoint is made before.
    const second = runJson(["--dir", dir, "--", "sh", "-c", "echo again > c.txt; rm -r d"]);
    expect(second).toMatchObject({
      status: 0,
      mounted: false,
      before: after,
      before_created: false,
      changed: true,
      summary: { added: 0, modified: 1, deleted: 1, renamed: 0 },
      undo: `afs cp restore ${after} -w work`,
    });

    const [, restore] = undo ?? [];
    afs.ok((restore as string).split(" ").slice(1));
    await until("the restore reached the directory", () => JSON.stringify(tree(dir)) === JSON.stringify(start));
    expect(workspaceTree("work")).toEqual(start);
    await unmount(dir, pid);
  });

  it("says when nothing changed and makes no checkpoint; 127 for a missing command, 128+N for a signal", async () => {
    const dir = dirWith("quiet", { "q.txt": "q\n" });
    const pid = mount("quiet", dir);
    const r = afs.run(["run", "--dir", dir, "--", "cat", "q.txt"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe("q\n");
    expect(r.stderr).toContain("changed nothing in quiet; no checkpoint made");
    const count = checkpoints("quiet").length;
    const json = runJson(["--dir", dir, "--", "true"]);
    expect(json).toMatchObject({ status: 0, changed: false, after: null, undo: null, before_created: false });
    expect(checkpoints("quiet")).toHaveLength(count);

    const missing = afs.run(["run", "--dir", dir, "--", "no-such-command-here"]);
    expect(missing.status).toBe(127);
    expect(missing.stderr).toContain("no-such-command-here: command not found");
    const killed = afs.run(["run", "--dir", dir, "--", "sh", "-c", "echo last > k.txt; kill -KILL $$"]);
    expect(killed.status).toBe(137);
    expect(killed.stderr).toContain("exited on SIGKILL");
    expect(killed.stderr).toContain("1 added, 0 modified, 0 deleted");
    expect(cat("quiet", "/k.txt")).toBe("last\n");
    await unmount(dir, pid);
  });

  it("passes SIGTERM on to the command and checkpoints what it did on its way out", async () => {
    const dir = dirWith("term", { "t.txt": "t\n" });
    const pid = mount("term", dir);
    const script = `trap 'echo bye > trapped.txt; exit 5' TERM; touch ready; while :; do sleep 0.05; done`;
    const child = spawn(process.execPath, [MAIN, "run", "--dir", dir, "--", "sh", "-c", script], {
      env: afs.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const status = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    await until("the command runs", () => existsSync(join(dir, "ready")));
    child.kill("SIGTERM");
    expect(await status).toBe(5);
    expect(stderr).toContain("sh exited with status 5");
    expect(cat("term", "/trapped.txt")).toBe("bye\n");
    await unmount(dir, pid);
  });

  it("mounts a directory that is not mounted and leaves it mounted; inside a mount it follows that mount's workspace", async () => {
    const dir = dirWith("fresh", { "f.txt": "f\n" });
    mkdirSync(join(dir, "sub"));
    // From the directory itself, no --dir: the current directory is the one run in.
    const r = afsIn(dir, ["run", "-w", "fresh", "--", "sh", "-c", "pwd > where.txt"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`mounted fresh on ${dir}`);
    const m = mountOf(dir);
    expect(m).toMatchObject({ workspace: "fresh", state: "running" });
    const pid = m?.pid as number;
    expect(alive(pid)).toBe(true);
    expect(cat("fresh", "/where.txt")).toBe(`${dir}\n`);
    expect(cat("fresh", "/f.txt")).toBe("f\n");

    // From a directory inside the mount, without -w: that mount, run where the caller is.
    const inner = afsIn(join(dir, "sub"), ["run", "--json", "--", "sh", "-c", "pwd > here.txt"]);
    expect(inner.status, inner.stderr).toBe(0);
    expect(JSON.parse(inner.stdout)).toMatchObject({ workspace: "fresh", dir, mounted: false, changed: true });
    expect(cat("fresh", "/sub/here.txt")).toBe(`${join(dir, "sub")}\n`);
    expect(mountOf(dir)?.pid).toBe(pid);

    afs.ok(["ws", "create", "other"]);
    const wrong = afsIn(join(dir, "sub"), ["run", "-w", "other", "--", "true"]);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain(`is mounted on workspace fresh`);
    expect(wrong.stderr).toContain("not other");
    await unmount(dir, pid);
  });

  it("leaves no mount process behind", () => {
    for (const pid of pids) expect(alive(pid)).toBe(false);
    const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
    expect(ps.split("\n").filter((line) => line.includes("mount-run") && line.includes(afs.tmp("")))).toEqual([]);
  });
});
