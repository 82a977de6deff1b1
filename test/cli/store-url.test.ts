// A store, home or export path that cannot be used: one clear line and an exit status, never a
// hang; and never a password from a store URL on the screen.
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, MAIN } from "./run.js";

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
});
afterAll(() => afs.cleanup());

/** Runs the CLI with a deadline; a hang is SIGKILLed (SIGTERM is what a hung mkdir ignores) and fails the test. */
function bounded(args: readonly string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    env: { ...afs.env, ...env },
    input: "",
    timeout: 15_000,
    killSignal: "SIGKILL",
  });
  expect(r.signal, `afs ${args.join(" ")} hung and was killed`).toBeNull();
  return { status: r.status, stderr: r.stderr.toString(), stdout: r.stdout.toString() };
}

describe("an unusable SQLite path", () => {
  it("is an IO_ERROR naming the directory that cannot be created, from --store or AFS_STORE", () => {
    for (const [args, env] of [
      [["status", "--store", "sqlite:/proc/x/afs.db"], {}],
      [["ws", "list"], { AFS_STORE: "/proc/x/y/afs.db" }],
    ] as const) {
      const r = bounded(args, env);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /^afs: cannot create \/proc\/x for the afs store \/proc\/x\/(y\/)?afs\.db \(ENOENT\): .*\[IO_ERROR\]\n$/,
      );
      expect(r.stderr).toContain("choose a path under a writable directory");
    }
  });

  it("is an IO_ERROR naming the file that stands where a directory must be", async () => {
    const file = afs.tmp("plain-file");
    await writeFile(file, "x");
    const r = bounded(["status", "--store", `sqlite:${file}/sub/afs.db`]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`for the afs store ${file}/sub/afs.db: ${file} exists and is not a directory`);
  });

  it("an export into an unusable directory is the same clear error", () => {
    afs.ok(["ws", "create", "exported"]);
    for (const extra of [[], ["--force"]]) {
      const r = bounded(["ws", "export", "exported", "/proc/x/out", ...extra]);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/^afs: cannot create \/proc\/x for the export \(ENOENT\): .*\[IO_ERROR\]\n$/);
    }
  });

  it("an unusable home is the same clear error", () => {
    const r = bounded(["ws", "use", "x", "--home", "/proc/x/home"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("cannot create /proc/x");
  });
});

describe("a password in the store URL", () => {
  it("never shows, in the message or in the debug details", () => {
    for (const url of [
      "redis://user:secret@127.0.0.1:1/0",
      "sqlite://user:secret@db.example/afs.db",
      "ftp://user:secret@h/x",
    ]) {
      for (const [args, env] of [
        [["status", "--store", url], { AFS_DEBUG: "1" }],
        [["status"], { AFS_STORE: url, AFS_DEBUG: "1" }],
      ] as const) {
        const r = bounded(args, env);
        expect(r.status, url).not.toBe(0);
        expect(r.stderr, url).not.toContain("secret");
        expect(r.stdout, url).not.toContain("secret");
      }
    }
  });

  it("a quoted URL shows its user with the password masked", () => {
    const r = bounded(["status", "--store", "sqlite://user:secret@db.example/afs.db"]);
    expect(r.stderr).toContain('store URL "sqlite://user:***@db.example/afs.db" names a host');
  });
});
