// A leaf command: the hidden global options so they also work after the arguments, and --json.
import type { Command } from "commander";
import { globalOptions } from "../context.js";

export function leaf(parent: Command, spec: string, description: string, json = true): Command {
  const cmd = globalOptions(parent.command(spec).description(description), true);
  return json ? cmd.option("--json", "print the result as JSON") : cmd;
}
