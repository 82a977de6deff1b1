// Preloaded into a CLI process (node --import) so a test can read its peak RSS (and its CPU time,
// user + system, all threads) from stderr. Worker threads inherit the --import, so only the main
// thread reports (the process's figures).
import { writeSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

if (isMainThread)
  process.on("exit", () => {
    const usage = process.resourceUsage();
    const cpuMs = Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000);
    writeSync(2, `\nAFS_MAX_RSS_KB=${usage.maxRSS}\nAFS_CPU_MS=${cpuMs}\n`);
  });
