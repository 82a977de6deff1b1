// The `afs` executable's entry: runs the command line once, for this process's arguments.
import { closeOnSignals } from "./context.js";
import { report } from "./errors.js";
import { main } from "./program.js";

closeOnSignals();
// A reader that stops early (`afs fs cat big.txt | head`) is not a failure: drop the rest quietly.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") process.exitCode = report(e);
});
// exitCode rather than exit(): stdout (possibly a pipe) drains before the process ends.
void main(process.argv.slice(2)).then((status) => {
  process.exitCode = status;
});
