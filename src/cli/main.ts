// The `afs` executable's entry: runs the command line once, for this process. The one place the
// CLI reads process.argv, process.env and process.cwd() for a command: they become its invocation.
import { readSettings } from "../core/settings.js";
import { closeOnSignals, ownEngines } from "./context.js";
import { report } from "./errors.js";
import { type Invocation, streamSink } from "./invocation.js";
import { Output } from "./output.js";
import { main } from "./program.js";

const cwd = (): string => {
  try {
    return process.cwd();
  } catch {
    // Deleted under the shell: relative paths name what they can from where the shell thinks it is.
    return process.env.PWD || "/";
  }
};

const invocation: Invocation = {
  argv: process.argv.slice(2),
  cwd: cwd(),
  env: process.env,
  // A getter: Node makes the stdin stream on first use, and most commands never read it.
  get stdin() {
    return process.stdin;
  },
  stdout: streamSink(process.stdout),
  stderr: streamSink(process.stderr),
};
const engines = ownEngines();
closeOnSignals(engines);
// A reader that stops early (`afs fs cat big.txt | head`) is not a failure: drop the rest quietly.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") process.exitCode = report(e, new Output(invocation), readSettings(invocation.env).debug);
});
// exitCode rather than exit(): stdout (possibly a pipe) drains before the process ends.
void main(invocation, engines).then((status) => {
  process.exitCode = status;
});
