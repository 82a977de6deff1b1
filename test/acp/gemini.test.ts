// A real ACP agent through `afs acp`: Gemini CLI 0.61 in --acp mode, offline, its model replaced by
// scripted responses (--fake-responses-non-strict). It creates one file and edits another through
// fs/write_text_file; the turn's checkpoint shows exactly those; undo, no-op turns and deny hold.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cli, cli, ensureBuilt, ROOT } from "../cli/run.js";

const GEMINI = join(ROOT, "node_modules/@google/gemini-cli/bundle/gemini.js");

/** One model response: a stream of one chunk, ending with STOP as Gemini requires. */
const response = (parts: object[]) =>
  JSON.stringify({
    method: "generateContentStream",
    response: [{ candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }] }],
  });

const EDIT_TURN = [
  response([
    { functionCall: { id: "call-1", name: "write_file", args: { file_path: "notes/new.md", content: "# New\n" } } },
    {
      functionCall: {
        id: "call-2",
        name: "replace",
        args: {
          file_path: "existing.txt",
          instruction: "Greet Gemini instead of the world",
          old_string: "hello world",
          new_string: "hello gemini",
        },
      },
    },
  ]),
  response([{ text: "Created notes/new.md and edited existing.txt." }]),
];
const TEXT_TURN = [response([{ text: "Nothing to change." }])];

let c: Cli;
let dir: string;
let geminiHome: string;
beforeAll(async () => {
  ensureBuilt();
  c = await cli();
  dir = c.tmp("site");
  geminiHome = c.tmp("gemini-home");
  mkdirSync(dir);
  mkdirSync(join(geminiHome, ".gemini"), { recursive: true });
  writeFileSync(join(dir, "existing.txt"), "hello world\nsecond line\n");
  writeFileSync(join(dir, "keep.txt"), "untouched\n");
  // No telemetry, no update checks, no folder-trust prompt: an isolated, quiet, offline Gemini.
  writeFileSync(
    join(geminiHome, ".gemini", "settings.json"),
    JSON.stringify({
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      security: { folderTrust: { enabled: false }, auth: { selectedType: "gemini-api-key" } },
    }),
  );
});
afterAll(() => c.cleanup());

function gemini(lines: string[], approve: string, prompt: string) {
  const script = c.tmp(`responses-${Math.random().toString(16).slice(2)}.jsonl`);
  writeFileSync(script, `${lines.join("\n")}\n`);
  return c.run(
    [
      "acp",
      "--dir",
      dir,
      "--approve",
      approve,
      "--prompt",
      prompt,
      "--",
      process.execPath,
      GEMINI,
      "--acp",
      "--fake-responses-non-strict",
      script,
      "-m",
      "gemini-2.5-flash",
    ],
    {
      env: {
        HOME: geminiHome,
        GEMINI_CLI_HOME: geminiHome,
        GEMINI_API_KEY: "dummy",
        GEMINI_CLI_NO_RELAUNCH: "true",
        NO_COLOR: "1",
      },
    },
  );
}

const checkpoints = () => c.json<{ name: string }[]>(["cp", "list", "-w", "site"]).map((x) => x.name);

describe("afs acp with Gemini CLI", () => {
  it("checkpoints a turn that creates and edits files, adds none for a turn that changes nothing, and undoes", () => {
    const r = gemini(EDIT_TURN, "allow", "create notes/new.md and greet gemini");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("Created notes/new.md and edited existing.txt.");
    expect(readFileSync(join(dir, "existing.txt"), "utf8")).toBe("hello gemini\nsecond line\n");
    expect(readFileSync(join(dir, "notes", "new.md"), "utf8")).toBe("# New\n");

    const cps = checkpoints();
    expect(cps[0]).toBe("turn-1");
    const base = cps[1] as string;
    const diff = c.json<{ changes: { path: string; status: string; patch?: string }[] }>([
      "cp",
      "diff",
      base,
      "turn-1",
      "-w",
      "site",
    ]);
    expect(diff.changes.map((x) => `${x.status} ${x.path}`).sort()).toEqual([
      "added /notes/new.md",
      "modified /existing.txt",
    ]);
    const patch = diff.changes.find((x) => x.path === "/existing.txt")?.patch ?? "";
    expect(patch).toContain("@@ -1,2 +1,2 @@");
    expect(patch).toContain("-hello world\n+hello gemini\n second line");

    const quiet = gemini(TEXT_TURN, "allow", "anything to change?");
    expect(quiet.status, quiet.stderr).toBe(0);
    expect(quiet.stdout).toContain("Nothing to change.");
    expect(checkpoints()).toEqual(cps);

    // Undo the turn: DIR goes back to the checkpoint before it; what DIR held is kept as safety.
    const undo = c.run(["ws", "export", "site", dir, "--checkpoint", base, "--force"]);
    expect(undo.status, undo.stderr).toBe(0);
    expect(readFileSync(join(dir, "existing.txt"), "utf8")).toBe("hello world\nsecond line\n");
    expect(() => readFileSync(join(dir, "notes", "new.md"))).toThrow();
    expect(readFileSync(join(dir, "keep.txt"), "utf8")).toBe("untouched\n");
  });

  it("under --approve deny leaves the files unchanged", () => {
    const before = readFileSync(join(dir, "existing.txt"), "utf8");
    const r = gemini(EDIT_TURN, "deny", "try to edit");
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(dir, "existing.txt"), "utf8")).toBe(before);
    expect(() => readFileSync(join(dir, "notes", "new.md"))).toThrow();
    expect(r.stderr).toContain("refused");
  });
});
