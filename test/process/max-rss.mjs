// Preloaded into a CLI process (node --import) so a test can read its peak RSS from stderr.
import { writeSync } from "node:fs";

process.on("exit", () => {
  writeSync(2, `\nAFS_MAX_RSS_KB=${process.resourceUsage().maxRSS}\n`);
});
