// The resident afs: a fresh `afs fs grep|glob|ls|query` hands its command line to a resident afs
// over a Unix socket and prints its answer. Everything here runs the built executable as a user
// would, with a socket directory of this file's own; answers are compared with the same command
// run by the process itself (AFS_DAEMON=off).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, MAIN, type Run } from "./run.js";

let afs: Cli;
let runDir: string;
/** The settings that turn the resident afs on for a run, with this file's socket directory. */
let on: Record<string, string>;
const OFF = { AFS_DAEMON: "off" };

interface Status {
  running: boolean;
  pid?: number;
  served?: number;
  stores?: number;
}

const resident = (args: readonly string[], env: Record<string, string> = {}): Run =>
  afs.run(args, { env: { ...on, ...env } });
const alone = (args: readonly string[], env: Record<string, string> = {}): Run =>
  afs.run(args, { env: { ...OFF, ...env } });
const status = (env: Record<string, string> = {}): Status =>
  JSON.parse(resident(["daemon", "status", "--json"], env).stdout) as Status;

async function until(what: string, test: () => boolean, ms = 15_000): Promise<void> {
  for (const deadline = Date.now() + ms; !test(); await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
  }
}

const pick = (r: Run) => ({ status: r.status, stdout: r.stdout, stderr: r.stderr });

/** Runs a command both ways and expects the same status, stdout and stderr. */
function same(args: readonly string[]): Run {
  const a = alone(args);
  const r = resident(args);
  expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({
    status: a.status,
    stdout: a.stdout,
    stderr: a.stderr,
  });
  return r;
}

beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  runDir = afs.tmp("run");
  on = { AFS_DAEMON: "auto", AFS_RUNTIME_DIR: runDir };
  afs.ok(["ws", "create", "r"]);
  afs.ok(["ws", "use", "r"]);
  afs.ok(["fs", "write", "/src/a.ts", "--content", "import { createHash } from 'node:crypto';\nexport const a = 1;\n"]);
  afs.ok(["fs", "write", "/src/b.ts", "--content", "// TODO: createHash here too\nexport const B = 2;\n"]);
  afs.ok(["fs", "write", "/docs/readme.md", "--content", "# Title\nNothing to import here\n"]);
});

afterEach(() => {
  resident(["daemon", "stop"]);
});

afterAll(async () => {
  resident(["daemon", "stop"]);
  await afs.cleanup();
});

describe("the resident afs", () => {
  it("is started by a search that finds none, then answers the next ones exactly as a process alone would", async () => {
    expect(status().running).toBe(false);
    expect(resident(["daemon", "status"]).status).toBe(3);
    const first = resident(["fs", "grep", "createHash"]);
    expect(first.status).toBe(0);
    expect(first.stdout).toBe(
      "/src/a.ts:1:import { createHash } from 'node:crypto';\n/src/b.ts:1:// TODO: createHash here too\n",
    );
    await until("the resident afs answers", () => status().running);
    const served = status().served ?? 0;

    same(["fs", "grep", "createHash"]);
    same(["fs", "grep", "-i", "-c", "IMPORT", "/"]);
    same(["fs", "grep", "-l", "--regexp", "export const [a-z]"]);
    same(["fs", "grep", "createHash", "--json"]);
    same(["fs", "grep", "-B", "1", "const", "/src"]);
    same(["fs", "glob", "*.ts"]);
    same(["fs", "ls", "/src", "--json"]);
    same(["fs", "ls", "/", "--depth", "2"]);
    same(["fs", "grep", "@types"]);
    // Each of those went to it.
    expect(status().served).toBe(served + 9);
    // Not these: help fits the caller's terminal, and query's @FILE is the caller's file.
    const searches = afs.tmp("searches.json");
    writeFileSync(searches, JSON.stringify([{ type: "lex", query: "createHash" }]));
    same(["fs", "grep", "--help"]);
    same(["fs", "query", "hash", "--searches", `@${searches}`]);
    expect(status().served).toBe(served + 9);
  });

  it("answers clients that ask at the same time, each its own answer", async () => {
    resident(["daemon", "start"]);
    const served = status().served ?? 0;
    const asks: string[][] = [
      ["fs", "grep", "createHash"],
      ["fs", "grep", "-c", "export"],
      ["fs", "grep", "-l", "import"],
      ["fs", "glob", "*.md"],
      ["fs", "ls", "/src"],
      ["fs", "grep", "x", "--workspace", "nope"],
      ["fs", "grep", "-i", "TODO", "/src"],
      ["fs", "ls", "/", "--depth", "3", "--json"],
    ];
    const together = await Promise.all(asks.map((args) => afs.start(args, { env: on })));
    for (const [i, args] of asks.entries()) {
      const [a, t] = [alone(args), together[i]];
      expect({ status: t?.status, stdout: t?.stdout, stderr: t?.stderr }, args.join(" ")).toEqual({
        status: a.status,
        stdout: a.stdout,
        stderr: a.stderr,
      });
    }
    expect(status().served).toBe(served + asks.length);
  });

  it("answers an fs ls while a long regex search runs, instead of after it", async () => {
    // 200 names for one large text (hard links: one file on disk): a regex with no literal to look
    // for is tried on every line of every copy, seconds of work.
    const tree = afs.tmp("slow-tree");
    mkdirSync(tree);
    const line = (i: number): string => `${String(i).padStart(6, "0")} the quick brown fox jumps over the lazy dog\n`;
    writeFileSync(join(tree, "f0.txt"), Array.from({ length: 20_000 }, (_, i) => line(i)).join(""));
    for (let i = 1; i < 200; i++) linkSync(join(tree, "f0.txt"), join(tree, `f${i}.txt`));
    afs.ok(["ws", "import", "slow", tree]);
    const search = ["fs", "grep", "-c", "-v", "-E", "([a-z]+ ){3}[0-9]+$", "--workspace", "slow"];
    resident(["daemon", "start"]);
    // Once first, so what follows is the search itself (its index built, its texts read).
    const started = Date.now();
    const warm = resident(search);
    const took = Date.now() - started;
    expect(warm.stdout.split("\n").filter(Boolean)).toHaveLength(200);
    const served = status().served ?? 0;

    const slow = afs.start(search, { env: on });
    // Long enough for the search to reach the resident afs, well before it can be done.
    await sleep(Math.min(500, took / 4));
    const ls = afs.start(["fs", "ls", "/src"], { env: on });
    const first = await Promise.race([slow.then(() => "search"), ls.then(() => "ls")]);
    expect(first, `the search alone takes ${took} ms`).toBe("ls");
    const [s, l] = await Promise.all([slow, ls]);
    expect({ status: l.status, stdout: l.stdout, stderr: l.stderr }).toEqual({ ...pick(alone(["fs", "ls", "/src"])) });
    expect({ status: s.status, stdout: s.stdout, stderr: s.stderr }).toEqual({ ...pick(warm) });
    // Both were answered by the resident afs, not by processes of their own.
    expect(status().served).toBe(served + 2);
  });

  it("passes errors back with their message and exit status", async () => {
    resident(["daemon", "start"]);
    expect(status().running).toBe(true);
    const missing = same(["fs", "grep", "x", "--workspace", "nope"]);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toContain('workspace "nope" does not exist');
    const bad = same(["fs", "grep", "x", "--no-such-flag"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown option '--no-such-flag'");
    const outside = same(["fs", "ls", "/../etc"]);
    expect(outside.status).toBe(2);
    const badRegex = same(["fs", "grep", "--regexp", "a(b"]);
    expect(badRegex.status).toBe(2);
  });

  it("sees what other processes write between its answers", () => {
    resident(["daemon", "start"]);
    expect(resident(["fs", "grep", "-l", "fresh-marker"]).stdout).toBe("");
    afs.ok(["fs", "write", "/new.txt", "--content", "a fresh-marker line\n"]);
    expect(resident(["fs", "grep", "fresh-marker"]).stdout).toBe("/new.txt:1:a fresh-marker line\n");
    afs.ok(["fs", "replace", "/new.txt", "--old", "fresh-marker", "--new", "changed"]);
    expect(resident(["fs", "grep", "-l", "fresh-marker"]).stdout).toBe("");
    afs.ok(["fs", "rm", "/new.txt"]);
    expect(resident(["fs", "glob", "new.txt"]).stdout).toBe("");
  });

  it("runs each command with its caller's home, store, workspace and directory", async () => {
    resident(["daemon", "start"]);
    const other = await cli();
    try {
      other.ok(["ws", "create", "o"]);
      other.ok(["fs", "write", "/only-here.txt", "--content", "createHash elsewhere\n", "-w", "o"]);
      // The same resident afs answers both homes, each from its own store.
      const mine = resident(["fs", "grep", "-l", "createHash"]);
      const theirs = resident(["fs", "grep", "-l", "createHash", "--workspace", "o"], { AFS_HOME: other.home });
      expect(mine.stdout).toBe("/src/a.ts\n/src/b.ts\n");
      expect(theirs.stdout).toBe("/only-here.txt\n");
      expect(resident(["fs", "grep", "-l", "createHash"], { AFS_HOME: other.home, AFS_WORKSPACE: "o" }).stdout).toBe(
        "/only-here.txt\n",
      );
      // A relative store path is the caller's directory's file (cli() runs in its temporary directory).
      afs.ok(["--store", "sqlite:rel.db", "ws", "create", "rel"]);
      afs.ok([
        "--store",
        "sqlite:rel.db",
        "fs",
        "write",
        "/rel.txt",
        "--content",
        "relative createHash\n",
        "-w",
        "rel",
      ]);
      expect(
        resident(["--store", "sqlite:rel.db", "fs", "grep", "-l", "createHash", "--workspace", "rel"]).stdout,
      ).toBe("/rel.txt\n");
      expect(existsSync(afs.tmp("rel.db"))).toBe(true);
      expect(status().stores).toBe(3);
    } finally {
      await other.cleanup();
    }
  });

  it("takes the workspace from each caller's AFS_WORKSPACE, not from whoever opened the store first", async () => {
    resident(["daemon", "start"]);
    const other = await cli();
    try {
      other.ok(["ws", "create", "o"]);
      other.ok(["fs", "write", "/here.txt", "--content", "createHash\n", "-w", "o"]);
      const env = { AFS_HOME: other.home };
      // The first caller names its workspace in the environment, and so opens the store.
      expect(resident(["fs", "grep", "-l", "createHash"], { ...env, AFS_WORKSPACE: "o" }).stdout).toBe("/here.txt\n");
      // The next names none and has no current one: told so, as a process alone would tell it.
      const none = ["fs", "grep", "-l", "createHash"];
      expect(pick(resident(none, env))).toEqual(pick(alone(none, env)));
      expect(resident(none, env).status).toBe(2);
    } finally {
      await other.cleanup();
    }
  });

  it("runs each command in its caller's environment: time zone, query's embedder settings", () => {
    resident(["daemon", "start"]);
    for (const TZ of ["Asia/Kathmandu", "America/St_Johns", "UTC"]) {
      const r = resident(["fs", "ls", "/src"], { TZ });
      expect(r.stdout).toBe(alone(["fs", "ls", "/src"], { TZ }).stdout);
    }
    expect(resident(["fs", "ls", "/src"], { TZ: "Asia/Kathmandu" }).stdout).not.toBe(
      resident(["fs", "ls", "/src"], { TZ: "America/St_Johns" }).stdout,
    );
    const missingModel = { AFS_EMBED_MODEL_DIR: afs.tmp("no-model") };
    const withDir = resident(["fs", "query", "createHash"], missingModel);
    expect(withDir.stderr).toContain("no-model");
    expect(withDir.stderr).toBe(alone(["fs", "query", "createHash"], missingModel).stderr);
    const without = resident(["fs", "query", "createHash"]);
    expect(without.stderr).not.toContain("no-model");
    expect(without.stdout).toBe(alone(["fs", "query", "createHash"]).stdout);
  });

  it("reopens a store that was deleted and made again", async () => {
    const again = await cli();
    try {
      again.ok(["ws", "create", "g"]);
      again.ok(["fs", "write", "/v1.txt", "--content", "version one\n", "-w", "g"]);
      const env = { ...on, AFS_WORKSPACE: "g" };
      expect(again.run(["fs", "grep", "version"], { env }).stdout).toBe("/v1.txt:1:version one\n");
      await until("the resident afs answers", () => status().running);
      expect(again.run(["fs", "grep", "version"], { env }).stdout).toBe("/v1.txt:1:version one\n");
      await rm(again.home, { recursive: true, force: true });
      again.ok(["ws", "create", "g"]);
      again.ok(["fs", "write", "/v2.txt", "--content", "version two\n", "-w", "g"]);
      expect(again.run(["fs", "grep", "version"], { env }).stdout).toBe("/v2.txt:1:version two\n");
    } finally {
      await again.cleanup();
    }
  });

  it("streams a large answer whole", () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} needle ${"x".repeat(i % 300)}`);
    afs.ok(["fs", "write", "/big.txt"], { input: `${lines.join("\n")}\n` });
    resident(["daemon", "start"]);
    const r = same(["fs", "grep", "needle", "/big.txt", "--limit", "100000"]);
    expect(r.stdout.length).toBeGreaterThan(8_000_000);
    expect(r.stdout.split("\n").length).toBe(60_001);
  });

  it("stops quietly when its reader does, and answers from a directory deleted under the shell", () => {
    resident(["daemon", "start"]);
    const lines = Array.from({ length: 50_000 }, (_, i) => `row ${i} needle`);
    afs.ok(["fs", "write", "/rows.txt"], { input: `${lines.join("\n")}\n` });
    const shell = (script: string): Run => {
      const r = spawnSync("bash", ["-c", script], { env: { ...afs.env, ...on }, cwd: afs.tmp(""), encoding: "utf8" });
      return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, raw: Buffer.from(r.stdout) };
    };
    const head = shell(
      `"${process.execPath}" "${MAIN}" fs grep needle /rows.txt --limit 100000 | head -1; echo "status \${PIPESTATUS[0]}"`,
    );
    expect(head.stdout).toBe("/rows.txt:1:row 0 needle\nstatus 0\n");
    expect(head.stderr).toBe("");
    const gone = shell(
      `mkdir gone && cd gone && rmdir ../gone && "${process.execPath}" "${MAIN}" fs grep -c needle /rows.txt; echo "status $?"`,
    );
    expect(gone.stdout).toBe("/rows.txt:50000\nstatus 0\n");
  });

  it("takes over the socket of one that was killed, and stops when told or when idle", async () => {
    resident(["daemon", "start"]);
    const { pid } = status();
    process.kill(pid as number, "SIGKILL");
    await until("the killed process is gone", () => spawnSync("kill", ["-0", String(pid)]).status !== 0);
    // Its socket file is still there; a search answers by itself and starts a new one in its place.
    expect(readdirSync(runDir).some((f) => f.endsWith(".sock"))).toBe(true);
    expect(resident(["fs", "grep", "-l", "createHash"]).stdout).toBe("/src/a.ts\n/src/b.ts\n");
    await until("a new resident afs answers", () => status().running);
    expect(status().pid).not.toBe(pid);

    expect(resident(["daemon", "stop"]).stdout).toBe("stopped\n");
    expect(status().running).toBe(false);
    expect(resident(["daemon", "stop"]).stdout).toContain("not running");

    resident(["daemon", "start"], { AFS_DAEMON_IDLE: "1" });
    expect(status().running).toBe(true);
    await until("it leaves after a second without a command", () => !status().running, 10_000);
  });

  it("is never used or started with AFS_DAEMON=off", async () => {
    const dir = afs.tmp("run-off");
    const env = { AFS_RUNTIME_DIR: dir, AFS_DAEMON: "off" };
    expect(afs.run(["fs", "grep", "-l", "createHash"], { env }).stdout).toBe("/src/a.ts\n/src/b.ts\n");
    await sleep(500);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
    const start = afs.run(["daemon", "start"], { env });
    expect(start.status).toBe(2);
    expect(start.stderr).toContain("AFS_DAEMON is off");
  });

  it("does not use a socket directory other users could open", async () => {
    const dir = afs.tmp("run-open");
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const env = { AFS_RUNTIME_DIR: dir, AFS_DAEMON: "auto" };
    // The search still answers, by itself, and starts nothing there.
    expect(afs.run(["fs", "grep", "-l", "createHash"], { env }).stdout).toBe("/src/a.ts\n/src/b.ts\n");
    await sleep(500);
    expect(readdirSync(dir)).toEqual([]);
    const start = afs.run(["daemon", "start"], { env });
    expect(start.status).toBe(5);
    expect(start.stderr).toContain("AFS_RUNTIME_DIR");
  });

  it("answers only its own build: the executable's bundle names the socket", () => {
    resident(["daemon", "start"]);
    const sockets = readdirSync(runDir).filter((f) => f.endsWith(".sock"));
    const bundles = readdirSync(join(MAIN, "..")).filter((f) => /^afs-.*\.cjs$/.test(f));
    expect(sockets).toEqual(bundles.map((b) => b.replace(/\.cjs$/, ".sock")));
  });
});
