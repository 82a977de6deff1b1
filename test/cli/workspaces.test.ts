// `afs ws …` and `afs status` end to end: create, list, show, use, fork, delete, import, export.
import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, MAIN } from "./run.js";

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
});
afterAll(() => afs.cleanup());

interface Workspace {
  name: string;
  description: string;
  head: string;
  dirty: boolean;
}

describe("afs ws", () => {
  it("starts with no workspaces and no current one", () => {
    expect(afs.ok(["ws", "list"])).toMatch(/no workspaces yet/);
    expect(afs.json(["ws", "list"])).toEqual([]);
    const status = afs.json<{ current_workspace: string | null; workspaces: number; home: string }>(["status"]);
    expect(status).toMatchObject({ current_workspace: null, workspaces: 0, home: afs.home });
    expect(afs.ok(["status"])).toMatch(/workspace\s+\(none; choose one with: afs ws use NAME\)/);
  });

  it("creates, lists, shows and uses workspaces", () => {
    expect(afs.ok(["ws", "create", "demo", "--description", "a demo"])).toBe("created workspace demo\n");
    const other = afs.json<Workspace>(["ws", "create", "other"]);
    expect(other).toMatchObject({ name: "other", head: "initial", dirty: false });

    const list = afs.json<Workspace[]>(["ws", "list"]);
    expect(list.map((w) => w.name).sort()).toEqual(["demo", "other"]);
    const table = afs.ok(["ws", "list"]);
    expect(table.split("\n")[0]).toMatch(/NAME\s+HEAD\s+LIVE\s+UPDATED\s+TEMPLATE\s+DESCRIPTION/);
    expect(table).toMatch(/demo\s+initial\s+clean\s+.*a demo/);

    expect(afs.ok(["ws", "use", "demo"])).toBe("now using workspace demo\n");
    expect(afs.ok(["ws", "list"])).toMatch(/^\*\s+demo/m);
    expect(afs.json<Workspace>(["ws", "show"])).toMatchObject({ name: "demo", description: "a demo" });
    expect(afs.ok(["ws", "show", "other"])).toMatch(/^workspace\s+other$/m);
    expect(afs.json<{ current_workspace: string }>(["status"]).current_workspace).toBe("demo");
  });

  it("takes the global options before or after the subcommand", () => {
    expect(afs.json<Workspace>(["-w", "other", "ws", "show"]).name).toBe("other");
    expect(afs.json<Workspace>(["--home", afs.home, "ws", "show", "other"]).name).toBe("other");
    expect(afs.json<Workspace>(["ws", "show", "other", "--home", afs.home]).name).toBe("other");
    const elsewhere = afs.tmp("elsewhere");
    expect(afs.json<Workspace[]>(["ws", "list", "--home", elsewhere])).toEqual([]);
    expect(afs.json<{ store: string }>(["status", "--home", elsewhere]).store).toContain(elsewhere);
  });

  it("forks a workspace including its live changes", () => {
    afs.ok(["fs", "write", "/notes.txt", "--content", "hello", "-w", "demo"]);
    const fork = afs.json<Workspace>(["ws", "fork", "demo", "copy"]);
    expect(fork).toMatchObject({ name: "copy", description: "fork of demo" });
    expect(afs.ok(["fs", "cat", "/notes.txt", "-w", "copy"])).toBe("hello");
    expect(afs.ok(["ws", "fork", "demo", "copy2"])).toBe("forked demo into copy2\n");
  });

  it("deletes workspaces and forgets the current one", () => {
    afs.ok(["ws", "use", "copy2"]);
    expect(afs.ok(["ws", "delete", "copy2"])).toBe("deleted workspace copy2\n");
    expect(afs.json<{ current_workspace: string | null }>(["status"]).current_workspace).toBeNull();
    expect(afs.json<{ deleted: string }>(["ws", "delete", "copy"])).toEqual({ deleted: "copy" });
    expect(
      afs
        .json<Workspace[]>(["ws", "list"])
        .map((w) => w.name)
        .sort(),
    ).toEqual(["demo", "other"]);
  });

  it("imports a directory honouring .gitignore and nested .afsignore, and exports it byte for byte", async () => {
    const src = afs.tmp("project");
    await mkdir(join(src, "src/generated"), { recursive: true });
    await mkdir(join(src, "node_modules/pkg"), { recursive: true });
    await writeFile(join(src, ".gitignore"), "node_modules/\n*.log\n");
    await writeFile(join(src, "README.md"), "# project\n");
    await writeFile(join(src, "debug.log"), "noise\n");
    await writeFile(join(src, "node_modules/pkg/index.js"), "module.exports = 1;\n");
    await writeFile(join(src, "src/main.ts"), "export const x = 1;\n");
    await writeFile(join(src, "src/.afsignore"), "generated/\n");
    await writeFile(join(src, "src/generated/big.ts"), "// generated\n");
    const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]);
    await writeFile(join(src, "src/logo.bin"), binary);

    const imported = afs.json<{ files: number; bytes: number; workspace: Workspace }>(["ws", "import", "proj", src]);
    expect(imported.files).toBe(5); // .gitignore, README.md, src/.afsignore, src/main.ts, src/logo.bin
    expect(imported.workspace).toMatchObject({ name: "proj", head: "import" });
    const listed = afs.json<{ path: string }[]>(["fs", "glob", "**", "-w", "proj"]);
    const paths = JSON.stringify(listed);
    expect(paths).toContain("/src/main.ts");
    expect(paths).not.toContain("node_modules");
    expect(paths).not.toContain("debug.log");
    expect(paths).not.toContain("generated");

    // Without a terminal on stderr there is no progress bar: stderr stays empty.
    const human = afs.run(["ws", "import", "proj2", src, "--description", "second"]);
    expect(human).toMatchObject({ status: 0, stderr: "" });
    expect(human.stdout).toMatch(/^imported 5 files \(\d+ B\) from .* into workspace proj2\n$/);

    const out = afs.tmp("exported");
    const exported = afs.json<{ files: number; bytes: number }>(["ws", "export", "proj", out]);
    expect(exported).toEqual({ files: imported.files, bytes: imported.bytes });
    expect((await readdir(out)).sort()).toEqual([".gitignore", "README.md", "src"]);
    expect((await readdir(join(out, "src"))).sort()).toEqual([".afsignore", "logo.bin", "main.ts"]);
    expect(await readFile(join(out, "src/logo.bin"))).toEqual(binary);
    expect(await readFile(join(out, "src/main.ts"), "utf8")).toBe("export const x = 1;\n");
  });

  it("exports a checkpoint instead of the live state", async () => {
    afs.ok(["fs", "write", "/README.md", "--content", "changed\n", "-w", "proj"]);
    const live = afs.tmp("live");
    const old = afs.tmp("old");
    expect(afs.run(["ws", "export", "proj", live])).toMatchObject({ status: 0, stderr: "" });
    afs.ok(["ws", "export", "proj", old, "--checkpoint", "import"]);
    expect(await readFile(join(live, "README.md"), "utf8")).toBe("changed\n");
    expect(await readFile(join(old, "README.md"), "utf8")).toBe("# project\n");
    const again = afs.run(["ws", "export", "proj", old]);
    expect(again.status).toBe(4);
    expect(again.stderr).toMatch(/^afs: .* is not empty; export into a new or empty directory \[ALREADY_EXISTS\]\n$/);
  });

  it("exports over a non-empty directory with --force, saving what it held as a safety checkpoint", async () => {
    const dir = afs.tmp("forced");
    await mkdir(dir);
    await writeFile(join(dir, "README.md"), "mine\n");
    await writeFile(join(dir, "extra.txt"), "extra\n");
    await writeFile(join(dir, ".gitignore"), "*.log\n");
    await writeFile(join(dir, "notes.log"), "ignored\n");
    const out = afs.ok(["ws", "export", "proj", dir, "--checkpoint", "import", "--force"]);
    const safety = /saved as checkpoint (\S+); undo with: afs ws export proj .* --checkpoint \S+ --force/.exec(
      out,
    )?.[1];
    expect(safety).toMatch(/^safety-/);
    expect(await readFile(join(dir, "README.md"), "utf8")).toBe("# project\n");
    expect(await readFile(join(dir, "notes.log"), "utf8")).toBe("ignored\n");
    await expect(readFile(join(dir, "extra.txt"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    // The undo brings back what the directory held.
    afs.ok(["ws", "export", "proj", dir, "--checkpoint", safety as string, "--force"]);
    expect(await readFile(join(dir, "README.md"), "utf8")).toBe("mine\n");
    expect(await readFile(join(dir, "extra.txt"), "utf8")).toBe("extra\n");
  });
});

// util-linux `script` gives the CLI a terminal, the only place a progress bar may appear.
const hasScript = spawnSync("script", ["--version"]).status === 0;

describe("afs ws template", () => {
  interface Listed {
    name: string;
    id: string;
    template: string | null;
  }
  interface Checkpoint {
    name: string;
    kind: string;
    description: string;
    root: string;
    parent: string | null;
    id: string;
  }

  it("offers a workspace under a slug; a new workspace starts from its live state, like a fork", () => {
    afs.ok(["ws", "create", "tpl-base"]);
    afs.ok(["fs", "write", "/app.txt", "--content", "checkpointed", "-w", "tpl-base"]);
    afs.ok(["cp", "create", "v1", "-w", "tpl-base"]);
    afs.ok(["fs", "write", "/app.txt", "--content", "live only", "-w", "tpl-base"]);

    expect(afs.json<Listed>(["ws", "template", "tpl-base", "starter"])).toMatchObject({
      name: "tpl-base",
      template: "starter",
    });
    const listed = afs.json<Listed[]>(["ws", "list"]);
    expect(listed.find((w) => w.name === "tpl-base")?.template).toBe("starter");
    expect(listed.filter((w) => w.template !== null).map((w) => w.name)).toEqual(["tpl-base"]);
    expect(afs.ok(["ws", "list"])).toMatch(/tpl-base\s+v1\s+changed\s+\S+ \S+\s+starter/);
    expect(afs.ok(["ws", "show", "tpl-base"])).toMatch(/^template {4}starter /m);

    expect(afs.ok(["ws", "create", "tpl-kid", "--template", "starter"])).toBe(
      "created workspace tpl-kid from template starter\n",
    );
    // What the template holds now: its live changes too, as a fork takes them.
    expect(afs.ok(["fs", "cat", "/app.txt", "-w", "tpl-kid"])).toBe("live only");
    const [start, ...older] = afs.json<Checkpoint[]>(["cp", "list", "-w", "tpl-kid"]);
    expect(older).toEqual([]);
    const v1 = afs.json<Checkpoint[]>(["cp", "list", "-w", "tpl-base"]).find((c) => c.name === "v1");
    // Like a fork: the live state folded onto the head, the checkpoint naming the template.
    expect(start).toMatchObject({ kind: "fork", parent: v1?.id });
    expect(start?.root).not.toBe(v1?.root);
    expect(start?.description).toBe("from template starter (workspace tpl-base, live state after checkpoint v1)");
    // The template itself is untouched: still dirty on v1.
    expect(afs.json<Listed & { head: string; dirty: boolean }>(["ws", "show", "tpl-base"])).toMatchObject({
      head: "v1",
      dirty: true,
    });
    const kid = afs.json<Listed & { description: string; head: string }>(["ws", "show", "tpl-kid"]);
    expect(kid).toMatchObject({ template: null, head: "fork", description: start?.description });
    expect(kid.id).toMatch(/^ws_[0-9a-f]{20}$/);

    const described = afs.json<{ description: string }>([
      "ws",
      "create",
      "tpl-kid2",
      "--template",
      "starter",
      "--description",
      "mine",
    ]);
    expect(described.description).toBe("mine");
  });

  it("a template never checkpointed gives its files; a clean one gives its head checkpoint's tree at once", () => {
    afs.ok(["ws", "create", "tpl-fresh"]);
    afs.ok(["fs", "write", "/seed.txt", "--content", "seeded", "-w", "tpl-fresh"]);
    afs.ok(["fs", "write", "/dir/more.txt", "--content", "more", "-w", "tpl-fresh"]);
    afs.ok(["ws", "template", "tpl-fresh", "fresh"]);
    afs.ok(["ws", "create", "fresh-kid", "--template", "fresh"]);
    expect(afs.ok(["fs", "cat", "/seed.txt", "-w", "fresh-kid"])).toBe("seeded");
    expect(afs.ok(["fs", "cat", "/dir/more.txt", "-w", "fresh-kid"])).toBe("more");
    // A change to the template later reaches only the workspaces created after it.
    afs.ok(["fs", "write", "/seed.txt", "--content", "changed", "-w", "tpl-fresh"]);
    expect(afs.ok(["fs", "cat", "/seed.txt", "-w", "fresh-kid"])).toBe("seeded");
    afs.ok(["ws", "create", "fresh-kid2", "--template", "fresh"]);
    expect(afs.ok(["fs", "cat", "/seed.txt", "-w", "fresh-kid2"])).toBe("changed");

    // Clean: the very tree of its head checkpoint, no copy.
    afs.ok(["cp", "create", "c1", "-w", "tpl-fresh"]);
    afs.ok(["ws", "create", "fresh-kid3", "--template", "fresh"]);
    const c1 = afs.json<Checkpoint[]>(["cp", "list", "-w", "tpl-fresh"]).find((c) => c.name === "c1");
    const [start] = afs.json<Checkpoint[]>(["cp", "list", "-w", "fresh-kid3"]);
    expect(start).toMatchObject({
      kind: "fork",
      root: c1?.root,
      parent: c1?.id,
      description: "from template fresh (workspace tpl-fresh, checkpoint c1)",
    });
  });

  it("slugs are unique, default to the name, and go with --unset or the workspace", () => {
    afs.ok(["ws", "create", "tpl-a"]);
    afs.ok(["ws", "create", "tpl-b"]);
    afs.ok(["ws", "template", "tpl-a", "shared"]);
    const taken = afs.run(["ws", "template", "tpl-b", "shared"]);
    expect(taken.status).toBe(4);
    expect(taken.stderr).toBe(
      "afs: template slug shared is taken by workspace tpl-a; choose another slug, or withdraw tpl-a first [ALREADY_EXISTS]\n",
    );
    expect(afs.json<Listed>(["ws", "template", "tpl-b"]).template).toBe("tpl-b");
    // A new slug replaces the old one.
    expect(afs.json<Listed>(["ws", "template", "tpl-a", "renamed"]).template).toBe("renamed");
    expect(afs.run(["ws", "create", "x1", "--template", "shared"]).status).toBe(3);

    expect(afs.ok(["ws", "template", "tpl-a", "--unset"])).toBe("workspace tpl-a is no longer a template\n");
    const gone = afs.run(["ws", "create", "x2", "--template", "renamed"]);
    expect(gone.status).toBe(3);
    expect(gone.stderr).toBe(
      'afs: template "renamed" does not exist; see afs ws list (templates show their slug) [NOT_FOUND]\n',
    );

    afs.ok(["ws", "delete", "tpl-b"]);
    expect(afs.json<Listed[]>(["ws", "list"]).some((w) => w.template === "tpl-b")).toBe(false);
    expect(afs.json<Listed>(["ws", "template", "tpl-a", "tpl-b"]).template).toBe("tpl-b");
  });

  it("refuses bad slugs, a slug with --unset, and unknown workspaces", () => {
    expect(afs.run(["ws", "template", "tpl-a", "bad slug"]).status).toBe(2);
    expect(afs.run(["ws", "template", "tpl-a", "s", "--unset"]).status).toBe(2);
    const missing = afs.run(["ws", "template", "nope", "s"]);
    expect(missing.status).toBe(3);
    // The CLI names CLI commands.
    expect(missing.stderr).toBe('afs: workspace "nope" does not exist; see afs ws list [NOT_FOUND]\n');
  });
});

describe("progress bars", () => {
  it.skipIf(!hasScript)("draws one on a terminal during import and export", async () => {
    const src = afs.tmp("tty-src");
    await mkdir(src);
    await writeFile(join(src, "data.bin"), Buffer.alloc(256 * 1024, 7));
    const inTerminal = (args: string[]) =>
      spawnSync("script", ["-qec", [process.execPath, MAIN, ...args].map((a) => `'${a}'`).join(" "), "/dev/null"], {
        env: afs.env,
      }).stdout.toString();
    const imported = inTerminal(["ws", "import", "tty", src]);
    expect(imported).toContain("importing [");
    expect(imported).toContain("imported 1 file (256.0 KiB)");
    expect(inTerminal(["ws", "export", "tty", afs.tmp("tty-out")])).toContain("exporting [");
  });
});

describe("afs ws: bad input", () => {
  it("refuses bad names with exit 2 and one line", () => {
    const r = afs.run(["ws", "create", "bad name"]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^afs: invalid workspace name "bad name": use letters, digits.*\[INVALID_ARGUMENT\]\n$/);
  });

  it("reports unknown workspaces with exit 3", () => {
    for (const args of [
      ["ws", "show", "nope"],
      ["ws", "use", "nope"],
      ["ws", "delete", "nope"],
      ["ws", "fork", "nope", "x"],
    ]) {
      const r = afs.run(args);
      expect(r.status, args.join(" ")).toBe(3);
      expect(r.stderr).toMatch(/^afs: .*nope.* \[NOT_FOUND\]\n$/);
    }
  });

  it("refuses an existing name with exit 4", () => {
    const r = afs.run(["ws", "create", "demo"]);
    expect(r.status).toBe(4);
    expect(r.stderr).toBe(
      "afs: workspace demo already exists; pick another name or delete it first [ALREADY_EXISTS]\n",
    );
  });

  it("says how to pick a workspace when none is selected", () => {
    const r = afs.run(["cp", "list"]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      "afs: no workspace given; pass -w NAME or choose one with: afs ws use NAME [INVALID_ARGUMENT]\n",
    );
    expect(afs.run(["fs", "ls"]).status).toBe(2);
  });

  it("importing a missing directory fails with NOT_FOUND", () => {
    const r = afs.run(["ws", "import", "ghost", afs.tmp("does-not-exist")]);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/\[NOT_FOUND\]\n$/);
  });

  it("treats commander usage errors as exit 2 with one line", () => {
    const missing = afs.run(["ws", "create"]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe("afs: missing required argument 'name'\n");
    const unknown = afs.run(["ws", "list", "--bogus"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("afs: unknown option '--bogus'\n");
    const command = afs.run(["frobnicate"]);
    expect(command.status).toBe(2);
    expect(command.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("prints help and version with exit 0", () => {
    expect(afs.run(["--help"])).toMatchObject({ status: 0 });
    expect(afs.ok(["--help"])).toMatch(/Usage: afs/);
    expect(afs.ok(["--version"])).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe("afs ws import of files over AFS_MAX_FILE_BYTES", () => {
  it("skips them with a warning naming each, or refuses the import with --strict", async () => {
    const src = afs.tmp("capped");
    await mkdir(join(src, "sub"), { recursive: true });
    await writeFile(join(src, "small.txt"), "ok\n");
    await writeFile(join(src, "sub", "huge.bin"), Buffer.alloc(64));
    const env = { AFS_MAX_FILE_BYTES: "10" };

    const strict = afs.run(["ws", "import", "capped-strict", src, "--strict"], { env });
    expect(strict.status).not.toBe(0);
    expect(strict.stderr).toMatch(/\/sub\/huge\.bin: 64 bytes is over the 10-byte cap \(AFS_MAX_FILE_BYTES\)/);
    expect(afs.json<Workspace[]>(["ws", "list"]).map((w) => w.name)).not.toContain("capped-strict");

    const lenient = afs.run(["ws", "import", "capped", src], { env });
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toMatch(/warning: skipped \/sub\/huge\.bin: 64 bytes is over the 10-byte cap/);
    expect(lenient.stdout).toMatch(/imported 1 file/);
    const out = afs.tmp("capped-out");
    afs.ok(["ws", "export", "capped", out]);
    expect(await readdir(out)).toEqual(["small.txt", "sub"]);
  });
});
