// History end to end through the built CLI: `afs fs history | cat --version | diff | restore |
// undelete`, `afs log` (filters, JSON, --follow seeing another process's write, and on Redis another
// home's), and `afs ws versioning` with what `afs gc` then keeps.
import { type ChildProcess, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../src/core/hash.js";
import { storeEnabled } from "../contract/stores.js";
import { type RedisServer, startRedis } from "../helpers/redis-server.js";
import { type Cli, cli, ensureBuilt, MAIN } from "./run.js";

interface Version {
  id: string | null;
  op: string;
  actor: string | null;
  surface: string | null;
  path: string;
  size: number | null;
  sha256: string | null;
  checkpoints: string[];
  time: string | null;
}

interface LogEntry {
  workspace: string;
  seq: number;
  op: string;
  path: string;
  actor: string;
  surface: string;
  size_before: number | null;
  size_after: number | null;
}

/** `afs log --follow --json` left running; `next` resolves with the first entry `match` accepts. */
function follow(afs: Cli, args: readonly string[], env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, [MAIN, "log", "--follow", "--json", ...args], {
    env: { ...afs.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const seen: LogEntry[] = [];
  let buffered = "";
  let stderr = "";
  const waiting: { match: (e: LogEntry) => boolean; resolve: (e: LogEntry) => void }[] = [];
  child.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout?.on("data", (c: Buffer) => {
    buffered += c.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines.filter(Boolean)) {
      const e = JSON.parse(line) as LogEntry;
      seen.push(e);
      for (const w of waiting.splice(0)) {
        if (w.match(e)) w.resolve(e);
        else waiting.push(w);
      }
    }
  });
  return {
    seen,
    next: (match: (e: LogEntry) => boolean, ms = 10_000): Promise<LogEntry> =>
      new Promise((resolve, reject) => {
        const found = seen.find(match);
        if (found) return resolve(found);
        const timer = setTimeout(() => reject(new Error(`not seen within ${ms} ms; stderr: ${stderr}`)), ms);
        waiting.push({
          match,
          resolve: (e) => {
            clearTimeout(timer);
            resolve(e);
          },
        });
      }),
    stop: () => child.kill("SIGTERM"),
  };
}

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
  afs.ok(["ws", "create", "demo"]);
  afs.ok(["ws", "use", "demo"]);
});
afterAll(() => afs.cleanup());

const write = (path: string, content: string, env?: Record<string, string>) =>
  afs.run(["fs", "write", path, "--content", content], { env: env ?? {} });

describe("afs fs history, cat --version, diff, restore, undelete", () => {
  it("lists versions newest first with who, through what, size, sha256 and checkpoints; renames followed", () => {
    write("/draft.md", "first\n");
    afs.ok(["cp", "create", "v1"]);
    write("/draft.md", "second line\n", { AFS_ACTOR: "agent" });
    afs.ok(["fs", "mv", "/draft.md", "/final.md"]);
    write("/final.md", "third\n");
    const page = afs.json<{ versions: Version[]; next: string | null }>(["fs", "history", "/final.md"]);
    expect(page.next).toBeNull();
    expect(page.versions.map((v) => [v.op, v.actor, v.surface, v.path, v.size, v.checkpoints])).toEqual([
      ["write", "tester", "cli", "/final.md", 6, []],
      ["rename", "tester", "cli", "/final.md", 12, []],
      ["write", "agent", "cli", "/draft.md", 12, []],
      ["write", "tester", "cli", "/draft.md", 6, ["v1"]],
    ]);
    expect(page.versions[0]?.sha256).toBe(sha256("third\n"));
    expect(page.versions[0]?.id).toBe(sha256("third\n").slice(0, 12));
    expect(page.versions[0]?.time).toMatch(/^\d{4}-\d\d-\d\dT/);

    const table = afs.ok(["fs", "history", "/final.md", "--limit", "2"]).split("\n");
    expect(table[0]).toMatch(/^VERSION\s+TIME\s+ACTOR\s+SURFACE\s+OP\s+SIZE\s+CHECKPOINTS\s+PATH$/);
    expect(table[1]).toMatch(
      new RegExp(`^${sha256("third\n").slice(0, 12)}\\s.*tester\\s+cli\\s+write\\s+6 B\\s+-\\s+/final.md$`),
    );
    expect(table[3]).toMatch(/^\(older versions: afs fs history \/final.md --cursor '.+'\)$/);
    const limit = afs.run(["fs", "history", "/final.md", "--limit", "zero"]);
    expect(limit.status).toBe(2);
  });

  it("prints an old version by id or checkpoint, and diffs it against another or the live file", () => {
    const second = sha256("second line\n").slice(0, 8);
    expect(afs.ok(["fs", "cat", "/final.md", "--version", second])).toBe("second line\n");
    // The checkpoint holds the file under its old name.
    expect(afs.ok(["fs", "cat", "/final.md", "--version", "v1"])).toBe("first\n");
    expect(afs.json<{ text: string; version: string }>(["fs", "cat", "/final.md", "--version", "v1"])).toMatchObject({
      text: "first\n",
      version: "checkpoint v1",
    });
    expect(afs.ok(["fs", "diff", "/final.md", "--from", "v1"])).toBe(
      "--- a/final.md\n+++ b/final.md\n@@ -1,1 +1,1 @@\n-first\n+third\n",
    );
    expect(afs.ok(["fs", "diff", "/final.md", "--from", "v1", "--to", second])).toContain("-first\n+second line\n");
    const missing = afs.run(["fs", "cat", "/final.md", "--version", "abcdef"]);
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toMatch(/^afs: \/final.md has no version abcdef; see afs fs history/);
    expect(afs.run(["fs", "diff", "/final.md"]).status).toBe(2);
  });

  it("restores a file and a subtree as one change each, and undeletes", () => {
    const second = sha256("second line\n").slice(0, 12);
    expect(afs.ok(["fs", "restore", "/final.md", "--from", second])).toMatch(
      new RegExp(`^restored /final.md from version ${second} \\(revision \\d+\\)\\n$`),
    );
    expect(afs.ok(["fs", "cat", "/final.md"])).toBe("second line\n");
    expect(afs.json<{ versions: Version[] }>(["fs", "history", "/final.md", "--limit", "1"]).versions[0]).toMatchObject(
      {
        op: "restore_version",
        actor: "tester",
      },
    );

    write("/src/a.ts", "a1");
    write("/src/b/c.ts", "c1");
    afs.ok(["cp", "create", "good"]);
    write("/src/a.ts", "a2");
    afs.ok(["fs", "rm", "-r", "/src/b"]);
    const r = afs.json<{ kind: string; from: string }>(["fs", "restore", "/src", "--from", "good"]);
    expect(r).toMatchObject({ kind: "dir", from: "checkpoint good" });
    expect(afs.ok(["fs", "cat", "/src/a.ts"])).toBe("a1");
    expect(afs.ok(["fs", "cat", "/src/b/c.ts"])).toBe("c1");

    afs.ok(["fs", "rm", "/src/a.ts"]);
    expect(afs.run(["fs", "cat", "/src/a.ts"]).status).not.toBe(0);
    expect(afs.ok(["fs", "undelete", "/src/a.ts"])).toMatch(/^undeleted \/src\/a.ts from version [0-9a-f]{12} /);
    expect(afs.ok(["fs", "cat", "/src/a.ts"])).toBe("a1");
    const again = afs.run(["fs", "undelete", "/src/a.ts"]);
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/exists; to bring back an older version of it: afs fs restore/);
  });
});

describe("afs fs history after afs cp restore", () => {
  it("lists what the restore did to each file: content brought back, a file taken away", () => {
    // A workspace of its own: the restore must not disturb the other tests' files.
    const w = ["-w", "restoring"];
    afs.ok(["ws", "create", "restoring"]);
    afs.ok(["fs", "write", "/f.txt", "--content", "v1", ...w]);
    afs.ok(["cp", "create", "one", ...w]);
    afs.ok(["fs", "write", "/f.txt", "--content", "v2", ...w]);
    afs.ok(["fs", "write", "/late.txt", "--content", "after the checkpoint", ...w]);
    afs.ok(["cp", "restore", "one", ...w]);

    const page = afs.json<{ versions: Version[] }>(["fs", "history", "/f.txt", ...w]);
    expect(page.versions.map((v) => [v.op, v.actor, v.surface, v.sha256, v.checkpoints])).toEqual([
      ["restore", "tester", "cli", sha256("v1"), ["one"]],
      ["write", "tester", "cli", sha256("v2"), [expect.stringMatching(/^safety-/)]],
      ["write", "tester", "cli", sha256("v1"), ["one"]],
    ]);
    expect(page.versions[0]?.id).toBe(sha256("v1").slice(0, 12));

    const gone = afs.json<{ versions: Version[] }>(["fs", "history", "/late.txt", ...w]);
    expect(gone.versions.map((v) => [v.op, v.id, v.sha256])).toEqual([
      ["restore", null, null],
      ["write", sha256("after the checkpoint").slice(0, 12), sha256("after the checkpoint")],
    ]);
    expect(afs.ok(["fs", "history", "/late.txt", ...w]).split("\n")[1]).toMatch(
      /^-\s.*\srestore\s+deleted\s+-\s+\/late.txt$/,
    );
    expect(afs.ok(["fs", "undelete", "/late.txt", ...w])).toMatch(/^undeleted \/late.txt from version [0-9a-f]{12} /);
    expect(afs.ok(["fs", "cat", "/late.txt", ...w])).toBe("after the checkpoint");
  });
});

describe("afs log", () => {
  it("shows the newest changes, one line each, filtered by path, actor and time", () => {
    const all = afs.json<LogEntry[]>(["log", "-w", "demo", "--limit", "5"]);
    expect(all).toHaveLength(5);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => a - b));
    const agent = afs.json<LogEntry[]>(["log", "--actor", "agent"]);
    expect(agent.map((e) => [e.workspace, e.op, e.path, e.surface, e.size_before, e.size_after])).toEqual([
      ["demo", "write", "/draft.md", "cli", 6, 12],
    ]);
    const src = afs.json<LogEntry[]>(["log", "-w", "demo", "--path", "/src/b"]);
    expect(src.every((e) => e.path === "/src/b" || e.path.startsWith("/src/b/"))).toBe(true);
    expect(src.length).toBeGreaterThan(0);
    expect(afs.json<LogEntry[]>(["log", "--since", "2999-01-01"])).toEqual([]);
    expect(afs.json<LogEntry[]>(["log", "--since", "1h"]).length).toBeGreaterThan(0);
    expect(afs.run(["log", "--since", "yesterday-ish"]).status).toBe(2);
    const lines = afs.ok(["log", "-w", "demo", "--actor", "agent"]).split("\n");
    expect(lines[0]).toMatch(/^TIME\s+ACTOR\s+SURFACE\s+OP\s+PATH\s+SIZE$/);
    expect(lines[1]).toMatch(/agent\s+cli\s+write\s+\/draft.md\s+\+6 B$/);
    // Checkpoints are in the log too.
    expect(afs.json<LogEntry[]>(["log", "-w", "demo"]).some((e) => e.op === "checkpoint")).toBe(true);
  });

  it("--follow prints a change another process makes, within a second or so", async () => {
    const f = follow(afs, ["-w", "demo", "--limit", "1"]);
    try {
      await f.next(() => true);
      const started = Date.now();
      write("/followed.txt", "hello", { AFS_ACTOR: "other" });
      const e = await f.next((x) => x.path === "/followed.txt");
      expect(e).toMatchObject({ actor: "other", surface: "cli", op: "write", size_after: 5 });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      f.stop();
    }
  });

  it("--follow without -w follows every workspace, those created after it started too", async () => {
    const f = follow(afs, ["--limit", "1"]);
    try {
      await f.next(() => true);
      afs.ok(["ws", "create", "newcomer"]);
      write("/hello.txt", "hi", { AFS_WORKSPACE: "newcomer" });
      write("/again.txt", "demo", { AFS_WORKSPACE: "demo" });
      expect(await f.next((x) => x.workspace === "newcomer")).toMatchObject({ path: "/hello.txt", seq: 1 });
      expect(await f.next((x) => x.path === "/again.txt")).toMatchObject({ workspace: "demo" });
    } finally {
      f.stop();
    }
  });
});

describe("afs ws versioning and gc", () => {
  it("shows and sets the policy, and gc says what history kept", () => {
    expect(afs.ok(["ws", "versioning", "demo"])).toBe("workspace demo: old versions kept 7 days\n");
    write("/kept.txt", "old");
    write("/kept.txt", "new");
    const gc = afs.json<{ versions_kept: number; versions_by_workspace: Record<string, number> }>([
      "gc",
      "--grace",
      "0",
    ]);
    expect(gc.versions_kept).toBeGreaterThan(0);
    expect(afs.ok(["fs", "cat", "/kept.txt", "--version", sha256("old").slice(0, 12)])).toBe("old");
    expect(afs.ok(["ws", "versioning", "demo", "--keep-days", "3", "--keep-versions", "2"])).toBe(
      "workspace demo: old versions kept 3 days and the newest 2 of each file\n",
    );
    expect(afs.json(["ws", "versioning", "demo", "--off"])).toEqual({
      workspace: "demo",
      enabled: false,
      keepDays: 3,
      keepVersions: 2,
    });
    expect(afs.ok(["gc", "--grace", "0"])).toMatch(/\nkept 0 old versions \(0 B\) for history/);
    expect(afs.run(["fs", "cat", "/kept.txt", "--version", sha256("old").slice(0, 12)]).status).not.toBe(0);
    expect(afs.run(["ws", "versioning", "demo", "--off", "--keep-days", "2"]).status).not.toBe(0);
    expect(afs.run(["ws", "versioning", "demo", "--keep-days", "-1"]).status).toBe(2);
  });
});

describe.runIf(storeEnabled("redis"))("afs log --follow on Redis", () => {
  let server: RedisServer;
  let other: Cli;
  beforeAll(async () => {
    server = await startRedis();
    other = await cli();
  });
  afterAll(async () => {
    await other?.cleanup();
    await server?.stop();
  });

  it("sees a write made from another home sharing the store", async () => {
    const store = { AFS_STORE: server.url };
    expect(afs.run(["ws", "create", "shared"], { env: store }).status).toBe(0);
    const f = follow(afs, ["-w", "shared"], store);
    try {
      await new Promise((r) => setTimeout(r, 500));
      other.run(["fs", "write", "/from-afar.txt", "--content", "hi", "-w", "shared"], {
        env: { ...store, AFS_ACTOR: "far" },
      });
      const e = await f.next((x) => x.path === "/from-afar.txt");
      expect(e).toMatchObject({ actor: "far", surface: "cli", workspace: "shared" });
    } finally {
      f.stop();
    }
  });
});
