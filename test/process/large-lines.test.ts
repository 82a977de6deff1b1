// A 600 MiB text file (over the 512 MiB whole-read limit) imported into a workspace answers windows
// of lines near its middle and its end through the real surfaces, `afs mcp` over the SDK's stdio
// client and `afs fs lines`, with exact lines and each process peaking under 300 MB RSS; an ACP
// window and a brokered byte range of it are answered too.
import { spawnSync } from "node:child_process";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Approvals } from "../../src/access/approvals.js";
import { allowConsent } from "../../src/access/consent.js";
import { resolveLimits } from "../../src/access/limits.js";
import { AcpFiles } from "../../src/protocols/acp/files.js";
import { BrokerHost } from "../../src/protocols/broker/host.js";
import { LocalDirVolume } from "../../src/volume/local-dir/local-dir-volume.js";
import { Afs } from "../../src/workspace/afs.js";
import { call } from "../broker/fixture.js";
import { type Cli, cli, ensureBuilt, MAIN, ROOT } from "../cli/run.js";

const MiB = 1024 * 1024;
const LINE_BYTES = 64;
const BLOCK_LINES = 16 * 1024; // 1 MiB a block
const BLOCKS = 600;
const LINES = BLOCKS * BLOCK_LINES; // plus an unterminated last line
const LAST = "the last line, without a newline: é";
const RSS_LIMIT_KB = 300 * 1000;
const PRELOAD = join(ROOT, "test/process/max-rss.mjs");

/** Line n (1-based) with its newline: 64 bytes, numbered so a window proves where it came from. */
const lineText = (n: number): string => `${`line ${String(n).padStart(10, "0")} `.padEnd(LINE_BYTES - 1, ".")}\n`;

let afs: Cli;
beforeAll(async () => {
  ensureBuilt();
  afs = await cli();
});
afterAll(() => afs.cleanup());

/** Writes the file a 1 MiB block at a time, filling in each line's number. */
async function writeBigFile(path: string): Promise<number> {
  const block = Buffer.from(Array.from({ length: BLOCK_LINES }, () => lineText(0)).join(""));
  const out = createWriteStream(path);
  for (let b = 0; b < BLOCKS; b++) {
    for (let i = 0; i < BLOCK_LINES; i++) {
      block.write(String(b * BLOCK_LINES + i + 1).padStart(10, "0"), i * LINE_BYTES + 5, "latin1");
    }
    if (!out.write(Buffer.from(block))) await once(out, "drain");
  }
  out.end(LAST);
  await once(out, "finish");
  return BLOCKS * MiB + Buffer.byteLength(LAST);
}

function measured(args: readonly string[]): { stdout: string; maxRssKb: number } {
  const r = spawnSync(process.execPath, ["--import", PRELOAD, MAIN, ...args], {
    env: afs.env,
    encoding: "utf8",
    maxBuffer: 16 * MiB,
  });
  if (r.status !== 0) throw new Error(`afs ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  const kb = Number(/AFS_MAX_RSS_KB=(\d+)/.exec(r.stderr)?.[1]);
  expect(kb, `no RSS report from afs ${args.join(" ")}`).toBeGreaterThan(0);
  return { stdout: r.stdout, maxRssKb: kb };
}

const window = (from: number, to: number): string =>
  Array.from({ length: to - from + 1 }, (_, i) => lineText(from + i)).join("");

/**
 * Over `afs mcp` (SDK stdio client): a window in the middle, the last lines, and the whole file
 * refused by the read cap. Returns the server's peak RSS (VmHWM) and the two calls' times.
 */
async function mcpWindows(workspace: string, middle: number): Promise<{ hwmKb: number; timings: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [MAIN, "mcp", "--workspace", workspace],
    env: afs.env as Record<string, string>,
    stderr: "pipe",
  });
  const client = new Client({ name: "large-lines-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    await client.listTools();
    const call = async (start: number, end: number) => {
      const r = await client.callTool({ name: "file_lines", arguments: { path: "/big.txt", start, end } });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      return r.structuredContent as { content: string; total_lines: number; end: number; sha256: string };
    };
    let t = Date.now();
    const mid = await call(middle, middle + 4);
    const midMs = Date.now() - t;
    expect(mid).toMatchObject({ content: window(middle, middle + 4), total_lines: LINES + 1, end: middle + 4 });
    t = Date.now();
    const tail = await call(LINES - 1, -1);
    const timings = `middle window ${midMs} ms, last lines ${Date.now() - t} ms`;
    expect(tail).toMatchObject({ content: window(LINES - 1, LINES) + LAST, total_lines: LINES + 1, end: LINES + 1 });
    // Asking for the whole file is refused by the read cap, without the server holding it.
    const whole = await client.callTool({ name: "file_lines", arguments: { path: "/big.txt", start: 1 } });
    expect(whole.isError).toBe(true);
    expect(JSON.stringify(whole.content)).toMatch(/QUOTA_EXCEEDED|fewer lines/);
    const status = await readFile(`/proc/${transport.pid}/status`, "utf8");
    return { hwmKb: Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]), timings };
  } finally {
    await client.close();
  }
}

it("answers windows of a 600 MiB file in a workspace and in a directory, each process under 300 MB RSS", {
  timeout: 600_000,
}, async () => {
  const src = afs.tmp("src");
  await mkdir(src);
  const size = await writeBigFile(join(src, "big.txt"));
  expect(size).toBeGreaterThan(512 * MiB);
  const imported = measured(["ws", "import", "big", src]);
  expect(imported.stdout).toMatch(/imported 1 file/);

  const middle = LINES / 2 + 7;
  const inWorkspace = await mcpWindows("big", middle);
  // The other faces in this process: an ACP window and a brokered byte range near the end.
  const engine = await Afs.open({ home: afs.home, actor: "tester" });
  try {
    const files = new AcpFiles({
      limits: resolveLimits({}, {}),
      approvals: new Approvals("deny"),
      openVolume: () => engine.workspaces.volume("big"),
    });
    const session = await files.addSession(async () => "s", src);
    const acpWindow = await files.readTextFile({
      sessionId: session,
      path: join(src, "big.txt"),
      line: middle,
      limit: 2,
    });
    expect(acpWindow.content).toBe(window(middle, middle + 1));
    // `afs acp` on its directory (a mount): the agent's reads go to the file on disk.
    const onDisk = new AcpFiles({
      limits: resolveLimits({}, {}),
      approvals: new Approvals("deny"),
      openVolume: (dir) => LocalDirVolume.open(dir),
    });
    const diskSession = await onDisk.addSession(async () => "d", src);
    const diskWindow = await onDisk.readTextFile({
      sessionId: diskSession,
      path: join(src, "big.txt"),
      line: middle,
      limit: 2,
    });
    expect(diskWindow.content).toBe(window(middle, middle + 1));
    const host = await BrokerHost.open({ afs: engine, roots: [{ workspace: "big" }], consent: allowConsent() });
    try {
      expect((await call(host, "files/consent", { message: "m", requestedPaths: ["."] })).ok).toBe(true);
      const r = await call(host, "files/read", {
        path: "big.txt",
        offset: size - Buffer.byteLength(LAST) - 10,
        length: 200,
      });
      expect(r.ok && r.result).toMatchObject({ content: lineText(LINES).slice(-10) + LAST, size, eof: true });
    } finally {
      await host.close();
    }
  } finally {
    await engine.close();
  }

  const viaCli = measured(["fs", "lines", "/big.txt", String(middle), String(middle + 2), "--workspace", "big"]);
  expect(viaCli.stdout).toBe(window(middle, middle + 2).replace(/\n$/, "\n"));
  console.info(
    `600 MiB file, peak RSS: import ${imported.maxRssKb} KB, afs mcp after three file_lines ${inWorkspace.hwmKb} KB, afs fs lines ${viaCli.maxRssKb} KB; file_lines ${inWorkspace.timings}`,
  );
  expect(inWorkspace.hwmKb).toBeGreaterThan(0);
  for (const kb of [inWorkspace.hwmKb, viaCli.maxRssKb]) expect(kb).toBeLessThan(RSS_LIMIT_KB);
});
