// Preloaded into a CLI process (node --import) so a test can read its peak RSS (and its CPU time,
// user + system, all threads) from stderr.
import { writeSync } from "node:fs";

process.on("exit", () => {
  const usage = process.resourceUsage();
  const cpuMs = Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000);
  writeSync(2, `\nAFS_MAX_RSS_KB=${usage.maxRSS}\nAFS_CPU_MS=${cpuMs}\n`);
});
