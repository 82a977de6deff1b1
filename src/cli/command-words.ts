// Which command a command line names, read without parsing it: the loader uses it to hand a search
// to the resident afs before loading anything, and program.ts to load that command's module only.

// afs's own options that take a value (given before the command).
const VALUED = new Set(["--home", "--store", "-w", "--workspace"]);

/** The command and subcommand argv names, skipping afs's own options; undefined when none. */
export function commandOf(argv: readonly string[]): [string | undefined, string | undefined] {
  const words: string[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const a = argv[i] as string;
    if (a === "--") break;
    if (VALUED.has(a)) i++;
    else if (!a.startsWith("-")) words.push(a);
  }
  return [words[0], words[1]];
}
