// `afs acp` end to end: the built CLI runs our own SDK agent (fixture-agent.ts) as a child over real
// pipes; the agent exercises fs/*, a permission request, the afs MCP server it was handed and its
// own disk writes; afs records DIR and checkpoints the turn.
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, MAIN, ROOT } from "../cli/run.js";

// tsx by absolute path: the agent runs in the project directory, where no node_modules is.
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
const AGENT = ["--", process.execPath, "--import", TSX, join(ROOT, "test/acp/fixture-agent.ts")];

let c: Cli;
let dir: string;
let outside: string;
beforeAll(async () => {
  ensureBuilt();
  c = await cli();
  dir = c.tmp("project");
  outside = c.tmp("outside");
  mkdirSync(join(dir, "src"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(dir, "src", "crlf.txt"), "one\r\ntwo\r\nthree\r\n");
  writeFileSync(join(dir, "src", "edit.txt"), "alpha\nbeta\n");
  writeFileSync(join(dir, "bin.dat"), Buffer.from([1, 0, 2, 0]));
  writeFileSync(join(dir, "big.txt"), "x".repeat(5000));
  writeFileSync(join(dir, ".gitignore"), "ignored/\n");
  writeFileSync(join(outside, "secret.txt"), "TOP SECRET\n");
  symlinkSync(join(outside, "secret.txt"), join(dir, "link.txt"));
  symlinkSync(outside, join(dir, "linkdir"));
});
afterAll(() => c.cleanup());

interface StepResult {
  ok?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

function acpTurn(steps: object[], extra: string[] = [], env: Record<string, string> = {}, on = dir) {
  const r = c.run(["acp", "--dir", on, "--approve", "allow", ...extra, "--prompt", JSON.stringify(steps), ...AGENT], {
    env: { AFS_MAX_TEXT_FILE_BYTES: "4096", ...env },
  });
  const results = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("RESULT "))
    .map((l) => JSON.parse(l.slice(7)) as StepResult);
  return { ...r, results };
}

const p = (...parts: string[]) => join(dir, ...parts);

describe("afs acp", () => {
  it("serves every fs/* case, a permission, the MCP server, and checkpoints the turn", () => {
    const r = acpTurn([
      { op: "read", path: p("src", "crlf.txt"), line: 2, limit: 1 },
      { op: "read", path: p("src", "crlf.txt"), line: 0, limit: 1 },
      { op: "read", path: p("src", "crlf.txt"), line: 9 },
      { op: "read", path: p("missing", "new.txt") },
      { op: "read", path: "src/crlf.txt" },
      { op: "read", path: join(outside, "secret.txt") },
      { op: "read", path: `${dir}/../outside/secret.txt` },
      { op: "read", path: p("link.txt") },
      { op: "read", path: p("linkdir", "secret.txt") },
      { op: "read", path: p("bin.dat") },
      { op: "read", path: p("big.txt") },
      { op: "read", path: p("src") },
      { op: "read", path: p("a\0b") },
      { op: "read", path: p("src", "crlf.txt"), session: "no-such-session" },
      { op: "write", path: p("src", "edit.txt"), content: "alpha\nBETA\n" },
      { op: "write", path: p("new", "created.txt"), content: "fresh\n" },
      { op: "write", path: p("linkdir", "evil.txt"), content: "pwned\n" },
      { op: "race", path: p("race.txt"), writes: 8, reads: 24 },
      { op: "permission", title: "Run the tests", path: p("src") },
      { op: "mcp" },
      { op: "mcp", tool: "file_read", args: { path: "/src/edit.txt" } },
      { op: "mcp", tool: "file_write", args: { path: "/via-mcp.txt", content: "from mcp\n" } },
      { op: "disk-write", path: p("shell.txt"), content: "from the shell\n" },
    ]);
    expect(r.stderr).not.toContain("TOP SECRET");
    expect(r.stdout).not.toContain("TOP SECRET");
    expect(r.status, r.stderr).toBe(0);
    const [w2, w0, past, missing, rel, out, dotdot, link, linkdir, bin, big, adir, nul, unknown] = r.results;
    expect(w2?.ok).toEqual({ content: "two\r\n" });
    expect(w0?.ok).toEqual({ content: "one\r\n" });
    expect(past?.ok).toEqual({ content: "" });
    expect(missing?.ok).toEqual({ content: "" });
    const refused = (x: StepResult | undefined) => [x?.error?.code, x?.error?.data?.code];
    expect(refused(rel)).toEqual([-32602, "INVALID_PATH"]);
    for (const x of [out, dotdot, link, linkdir]) expect(refused(x)).toEqual([-32602, "PERMISSION_DENIED"]);
    expect(out?.error?.data?.path).toBe(join(outside, "secret.txt"));
    expect(refused(bin)).toEqual([-32602, "INVALID_ARGUMENT"]);
    expect(bin?.error?.message).toContain("binary");
    expect(refused(big)).toEqual([-32602, "QUOTA_EXCEEDED"]);
    expect(refused(adir)).toEqual([-32602, "INVALID_ARGUMENT"]);
    expect(adir?.error?.message).toContain("directory");
    expect(refused(nul)).toEqual([-32602, "INVALID_PATH"]);
    expect(unknown?.error?.code).toBe(-32602);
    expect(unknown?.error?.message).toContain("unknown session");

    const [edit, created, evil, race, permission, tools, mcpRead, mcpWrite, shell] = r.results.slice(14);
    expect(edit?.ok).toEqual({});
    expect(created?.ok).toEqual({});
    expect(refused(evil)).toEqual([-32602, "PERMISSION_DENIED"]);
    expect(race?.ok, JSON.stringify(race)).toEqual({ reads: 24, torn: 0 });
    expect(permission?.ok).toEqual({ outcome: { outcome: "selected", optionId: "allow" } });
    expect(tools?.ok?.tools).toEqual(expect.arrayContaining(["file_read", "file_write", "file_grep"]));
    expect(mcpRead?.ok).toMatchObject({ content: "alpha\nBETA\n" });
    expect(mcpWrite?.error).toBeUndefined();
    expect(shell?.ok).toEqual({ ok: true });

    // Every way of writing landed in DIR...
    expect(readFileSync(p("src", "edit.txt"), "utf8")).toBe("alpha\nBETA\n");
    expect(readFileSync(p("new", "created.txt"), "utf8")).toBe("fresh\n");
    expect(readFileSync(p("via-mcp.txt"), "utf8")).toBe("from mcp\n");
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("TOP SECRET\n");
    // ...and in the turn's checkpoint.
    const ws = "project";
    const cps = c.json<{ name: string }[]>(["cp", "list", "-w", ws]).map((x) => x.name);
    expect(cps).toContain("turn-1");
    const diff = c.json<{ changes: { path: string; status: string; patch?: string }[] }>([
      "cp",
      "diff",
      cps[cps.indexOf("turn-1") + 1] as string,
      "turn-1",
      "-w",
      ws,
    ]);
    expect(diff.changes.map((x) => `${x.status} ${x.path}`).sort()).toEqual([
      "added /new/created.txt",
      "added /race.txt",
      "added /shell.txt",
      "added /via-mcp.txt",
      "modified /src/edit.txt",
    ]);
    expect(diff.changes.find((x) => x.path === "/src/edit.txt")?.patch).toContain("-beta\n+BETA");
    // The turn's changes are recorded as the agent's, through ACP: its fs/* writes and its shell's.
    for (const path of ["/src/edit.txt", "/new/created.txt", "/shell.txt"]) {
      const [last] = c.json<{ actor: string; surface: string }[]>(["log", "-w", ws, "--path", path, "--limit", "1"]);
      expect(last, path).toMatchObject({ actor: "fixture-agent", surface: "acp" });
    }
  });

  it("adds no checkpoint for a turn that changes nothing", () => {
    const before = c.json<unknown[]>(["cp", "list", "-w", "project"]).length;
    const r = acpTurn([{ op: "read", path: p("src", "edit.txt") }]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("no files changed");
    expect(c.json<unknown[]>(["cp", "list", "-w", "project"]).length).toBe(before);
  });

  it("under --approve deny refuses the write and leaves the file as it was", () => {
    const r = c.run(
      [
        "acp",
        "--dir",
        dir,
        "--approve",
        "deny",
        "--prompt",
        JSON.stringify([{ op: "write", path: p("src", "edit.txt"), content: "denied\n" }]),
        ...AGENT,
      ],
      {},
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('"PERMISSION_DENIED"');
    expect(readFileSync(p("src", "edit.txt"), "utf8")).toBe("alpha\nBETA\n");
  });

  it("says clearly when the agent cannot be run, exits at once, never answers, or DIR is missing", () => {
    const cases: [string[], RegExp][] = [
      [
        ["acp", "--dir", dir, "--prompt", "x", "--approve", "allow", "--", "no-such-agent-xyz"],
        /no-such-agent-xyz was not found/,
      ],
      [["acp", "--dir", dir, "--prompt", "x", "--approve", "allow", ...AGENT, "exit"], /exited with status 3/],
      [
        ["acp", "--dir", dir, "--prompt", "x", "--approve", "allow", "--init-timeout", "2", ...AGENT, "silent"],
        /did not answer initialize/,
      ],
      [["acp", "--dir", c.tmp("nope"), "--prompt", "x", ...AGENT], /is not a directory/],
    ];
    for (const [args, message] of cases) {
      const r = c.run(args);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(message);
      expect(
        r.stderr
          .trim()
          .split("\n")
          .filter((l) => l.startsWith("afs: ") && !l.includes("workspace")).length,
      ).toBe(1);
    }
    // Nothing the runs started is left behind: no agent, no afs mcp server of this home.
    const left = execFileSync("ps", ["-eo", "args"])
      .toString()
      .split("\n")
      .filter((l) => l.includes(c.home));
    expect(left).toEqual([]);
  });

  it("mounts DIR on an existing workspace holding other files only with --prefer (--adopt: local)", () => {
    const put = (ws: string, path: string, content: string) =>
      c.ok(["fs", "write", path, "-w", ws, "--content", content]);
    const project = (name: string, content: string) => {
      const d = c.tmp(name);
      mkdirSync(d);
      writeFileSync(join(d, "x.txt"), content);
      return d;
    };
    const turn = (d: string, ws: string, ...extra: string[]) =>
      c.run([
        "acp",
        "--dir",
        d,
        "-w",
        ws,
        ...extra,
        "--approve",
        "allow",
        "--prompt",
        JSON.stringify([{ op: "read", path: join(d, "x.txt") }]),
        ...AGENT,
      ]);
    c.ok(["ws", "create", "existing"]);
    put("existing", "/x.txt", "from the workspace\n");
    const other = project("other", "x\n");
    const refused = turn(other, "existing");
    expect(refused.status).toBe(4);
    expect(refused.stderr).toContain("--prefer local|remote");
    expect(refused.stderr).toContain("/x.txt");
    expect(c.ok(["fs", "cat", "/x.txt", "-w", "existing"])).toBe("from the workspace\n");
    const adopted = turn(other, "existing", "--adopt");
    expect(adopted.status, adopted.stderr).toBe(0);
    expect(adopted.stderr).toContain("--adopt is deprecated");
    expect(c.ok(["fs", "cat", "/x.txt", "-w", "existing"])).toBe("x\n");
    // The side that gave way is kept beside it, in the directory and in the workspace.
    const copies = readdirSync(other).filter((n) => n.startsWith("x.conflict-"));
    expect(copies).toHaveLength(1);
    expect(readFileSync(join(other, copies[0] as string), "utf8")).toBe("from the workspace\n");
    expect(c.ok(["fs", "cat", `/${copies[0]}`, "-w", "existing"])).toBe("from the workspace\n");

    c.ok(["ws", "create", "theirs"]);
    put("theirs", "/x.txt", "theirs\n");
    const mine = project("mine", "mine\n");
    const preferred = turn(mine, "theirs", "--prefer", "remote");
    expect(preferred.status, preferred.stderr).toBe(0);
    expect(readFileSync(join(mine, "x.txt"), "utf8")).toBe("theirs\n");
    expect(c.ok(["fs", "cat", "/x.txt", "-w", "theirs"])).toBe("theirs\n");
  });

  it("on a directory a background afs mount keeps in step: uses that sync, which keeps running after", () => {
    const bg = c.tmp("background");
    mkdirSync(bg);
    writeFileSync(join(bg, "a.txt"), "a\n");
    const mounted = c.json<{ pid: number }>(["mount", "bg", bg]);
    try {
      const steps = [
        { op: "write", path: join(bg, "a.txt"), content: "A\n" },
        { op: "mcp", tool: "file_read", args: { path: "/a.txt" } },
        { op: "mcp", tool: "file_write", args: { path: "/via-mcp.txt", content: "from mcp\n" } },
        { op: "disk-write", path: join(bg, "shell.txt"), content: "from the shell\n" },
      ];
      const r = acpTurn(steps, [], {}, bg);
      expect(r.status, r.stderr).toBe(0);
      const [write, mcpRead, mcpWrite, shell] = r.results;
      expect(write?.ok).toEqual({});
      // The agent's write was uploaded by the background sync before the agent heard back.
      expect(mcpRead?.ok).toMatchObject({ content: "A\n" });
      expect(mcpWrite?.error).toBeUndefined();
      expect(shell?.ok).toEqual({ ok: true });
      const cps = c.json<{ name: string }[]>(["cp", "list", "-w", "bg"]).map((x) => x.name);
      expect(cps[0]).toBe("turn-1");
      const diff = c.json<{ changes: { path: string; status: string }[] }>([
        "cp",
        "diff",
        cps[1] as string,
        "turn-1",
        "-w",
        "bg",
      ]);
      expect(diff.changes.map((x) => `${x.status} ${x.path}`).sort()).toEqual([
        "added /shell.txt",
        "added /via-mcp.txt",
        "modified /a.txt",
      ]);
      expect(readFileSync(join(bg, "via-mcp.txt"), "utf8")).toBe("from mcp\n");
      // One sync for the directory: the background one, still running.
      const listed = c.json<{ mounts: { dir: string; state: string; pid: number | null }[] }>(["status"]).mounts;
      expect(listed.filter((m) => m.dir === realpathSync(bg))).toEqual([
        expect.objectContaining({ state: "running", pid: mounted.pid }),
      ]);
      // Another workspace on it is refused, naming the one it is mounted on.
      const other = c.run(["acp", "--dir", bg, "-w", "elsewhere", "--approve", "allow", "--prompt", "[]", ...AGENT]);
      expect(other.status).toBe(4);
      expect(other.stderr).toContain("mounted on workspace bg");
      // Mounted read-only, the agent's changes would not be kept: refused, saying so.
      c.ok(["unmount", bg]);
      c.ok(["mount", "bg", bg, "--readonly"]);
      const readonly = acpTurn([], [], {}, bg);
      expect(readonly.status).not.toBe(0);
      expect(readonly.stderr).toContain("read-only");
    } finally {
      c.ok(["unmount", bg]);
    }
  });

  it("on Ctrl-C ends the agent and the MCP server it started, within seconds", async () => {
    const steps = [{ op: "mcp" }, { op: "sleep", ms: 60_000 }];
    const child = spawn(
      process.execPath,
      [MAIN, "acp", "--dir", dir, "--approve", "allow", "--prompt", JSON.stringify(steps), ...AGENT],
      { env: c.env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("RESULT")) resolve();
      });
      child.once("exit", () => reject(new Error(`afs acp exited early: ${out}`)));
    });
    const running = () =>
      execFileSync("ps", ["-eo", "args"])
        .toString()
        .split("\n")
        .filter((l) => l.includes(c.home));
    expect(running().some((l) => l.includes(" mcp "))).toBe(true);
    // The session's directory is a mount like any other: running while the session runs, stopped after.
    type Listed = { workspace: string; dir: string; state: string; pid: number | null };
    const mountOf = () =>
      c.json<{ mounts: Listed[] }>(["status"]).mounts.find((m) => m.dir === realpathSync(dir)) as Listed;
    expect(mountOf()).toMatchObject({ workspace: "project", state: "running", pid: child.pid });
    const started = Date.now();
    child.kill("SIGINT");
    const status = await new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    expect(status).toBe(130);
    for (let i = 0; i < 50 && running().length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(running()).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(mountOf()).toMatchObject({ workspace: "project", state: "stopped", pid: null });
  });

  it("on a terminal: a prompt loop that shows each write's diff and asks before it lands", async () => {
    // `script` (util-linux) runs afs acp on a pseudo-terminal, as a person would.
    const steps = [
      { op: "write", path: p("asked-yes.txt"), content: "approved\n" },
      { op: "write", path: p("asked-no.txt"), content: "refused\n" },
    ];
    const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
    const command = [process.execPath, MAIN, "acp", "--dir", dir, ...AGENT].map(quote).join(" ");
    const child = spawn("script", ["-qfec", command, "/dev/null"], { env: c.env, stdio: ["pipe", "pipe", "pipe"] });
    let screen = "";
    const waitFor = (text: string, from: number) =>
      new Promise<number>((resolve, reject) => {
        const check = () => {
          const at = screen.indexOf(text, from);
          if (at >= 0) {
            child.stdout.off("data", onData);
            resolve(at + text.length);
          }
        };
        const onData = (d: Buffer) => {
          screen += d.toString();
          check();
        };
        child.stdout.on("data", onData);
        child.once("exit", () => reject(new Error(`afs acp exited; screen:\n${screen}`)));
        check();
      });
    let at = await waitFor("> ", 0);
    child.stdin.write(`${JSON.stringify(steps)}\r`);
    at = await waitFor("[y/N]", at);
    expect(screen.slice(0, at)).toContain("+approved");
    child.stdin.write("y\r");
    at = await waitFor("[y/N]", at);
    expect(screen.slice(0, at)).toContain("+refused");
    child.stdin.write("n\r");
    at = await waitFor("checkpoint turn-", at);
    await waitFor("> ", at);
    child.stdin.write("\x04"); // Ctrl-D ends the loop
    const status = await new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    expect(status, screen).toBe(0);
    expect(readFileSync(p("asked-yes.txt"), "utf8")).toBe("approved\n");
    expect(() => readFileSync(p("asked-no.txt"))).toThrow();
    expect(screen).toContain("allowed write");
    expect(screen).toContain("refused write");
  });
});
