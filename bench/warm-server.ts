// A warm afs process as users run one: `afs mcp` over stdio (the official SDK's client), searched
// again and again through `file_grep`, with the server process's own memory read from
// /proc/PID/status. The in-process warm figures of million-search.ts share the bench's heap, so
// they say nothing of what a resident server holds; this does.
import { readFileSync } from "node:fs";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { median, stdioSession } from "./lib.js";

export interface WarmServer {
  /** Median wall time of the searches after the first two, as the client sees it. */
  ms: number;
  /** The server's peak RSS (VmHWM) in bytes after all the searches. */
  peakRss: number;
  /** Its RSS when the searches were done. */
  rss: number;
  /** The files the last search listed (for checking against rg). */
  files: string[];
}

/** Kilobytes in one /proc/PID/status line such as "VmHWM:   123456 kB". */
function statusKb(pid: number, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** `runs` + 2 `file_grep -l` searches for `literal` in one `afs mcp` server over workspace `workspace`. */
export async function warmServerSearch(
  cli: string,
  home: string,
  workspace: string,
  literal: string,
  runs: number,
): Promise<WarmServer> {
  const { client, pid, close } = await stdioSession(cli, home, workspace, {
    env: { AFS_DAEMON: "off", AFS_INDEX_BACKGROUND: "off" },
    stderr: "inherit",
  });
  try {
    const samples: number[] = [];
    let files: string[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const start = performance.now();
      const r = (await client.callTool(
        { name: "file_grep", arguments: { pattern: literal, fixed_strings: true, files_with_matches: true } },
        undefined,
        { timeout: 600_000 },
      )) as CallToolResult;
      if (i >= 2) samples.push(performance.now() - start);
      if (r.isError) throw new Error(`file_grep failed: ${JSON.stringify(r.content)}`);
      files = ((r.structuredContent as { files?: string[] }).files ?? []).slice().sort();
    }
    return { ms: median(samples), peakRss: statusKb(pid, "VmHWM"), rss: statusKb(pid, "VmRSS"), files };
  } finally {
    await close();
  }
}
