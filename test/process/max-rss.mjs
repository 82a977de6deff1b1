// Preloaded into a CLI process (node --import) so a test can read its peak RSS from stderr.
// Worker threads inherit the --import, so only the main thread reports (the process's figure).
import { writeSync } from "node:fs";
import { isMainThread } from "node:worker_threads";

if (isMainThread)
  process.on("exit", () => {
    writeSync(2, `\nAFS_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`);
  });
