// Turns one file operation into one CLI command. The operation's zod schema is the only
// description of its arguments: the CLI reads names, types, descriptions and which are required
// from it, maps its own argument and flag names onto them in one table per command, and lets the
// schema validate the result.
import { readFile } from "node:fs/promises";
import { type Command, Option } from "commander";
import { z } from "zod";
import { AfsError } from "../core/errors.js";
import type { SearchIndexes } from "../search/indexes.js";
import type { Volume } from "../volume/volume.js";
import { leaf } from "./commands/leaf.js";
import { type Io, workspaceOption } from "./context.js";
import { fromZod } from "./errors.js";
import type { JsonFlag } from "./output.js";

export interface OpCommand<A, R> {
  /** Command name, e.g. "replace". */
  name: string;
  summary: string;
  schema: z.ZodType<A>;
  /**
   * Runs the operation: `indexes` are the home's search indexes (for the operations that search),
   * `io` the invocation it runs for (its settings, directory and streams).
   */
  run: (volume: Volume, args: A, context: { indexes: SearchIndexes; io: Io }) => Promise<R>;
  /** Positional arguments in order: CLI name → the operation's argument. */
  positionals?: Readonly<Record<string, string>>;
  /** Flags as commander spells them ("-i, --ignore-case", "--old <text>") → the operation's argument. */
  flags?: Readonly<Record<string, string>>;
  /** Flags taken for the habits of other tools that change nothing here (commander spelling → help). */
  accepted?: Readonly<Record<string, string>>;
  /** Arguments the CLI always passes (not user-facing). */
  fixed?: Readonly<Record<string, unknown>>;
  /** The operation's text argument that --content fills, or stdin when --content is absent. */
  content?: string;
  /** Human rendering; `args` are the parsed arguments. */
  render: (result: R, args: A, io: Io) => string | readonly string[];
  /** When set, the human output is these raw bytes instead of text (`cat`). */
  raw?: (result: R) => Buffer;
  /** When set, the human output is written by this as it is read, never held whole (`lines`). */
  stream?: (volume: Volume, args: A, io: Io) => Promise<void>;
  /** Arguments to use instead of `fixed` when --json is given. */
  jsonFixed?: Readonly<Record<string, unknown>>;
}

interface JsonSchemaProperty {
  type?: string;
  description?: string;
}

interface ObjectJsonSchema {
  properties?: Record<string, JsonSchemaProperty>;
  required?: string[];
}

function describeSchema(schema: z.ZodType): { props: Record<string, JsonSchemaProperty>; required: Set<string> } {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as ObjectJsonSchema;
  return { props: json.properties ?? {}, required: new Set(json.required ?? []) };
}

/** Strings from the command line into the types the schema declares; anything odd is left for zod to reject. */
async function coerce(value: unknown, prop: JsonSchemaProperty | undefined, label: string, io: Io): Promise<unknown> {
  if (typeof value !== "string" || !prop?.type) return value;
  if (prop.type === "integer" || prop.type === "number") return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
  if (prop.type === "array" || prop.type === "object") {
    const text = value.startsWith("@") ? await readArgFile(value.slice(1), label, io) : value;
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new AfsError("INVALID_ARGUMENT", `${label}: not valid JSON (${(e as Error).message}); pass JSON or @file`);
    }
  }
  return value;
}

/** `@FILE` (taken from the caller's directory) or `@-` (stdin). */
async function readArgFile(path: string, label: string, io: Io): Promise<string> {
  try {
    return path === "-" ? (await readStdin(io)).toString("utf8") : await readFile(io.path(path), "utf8");
  } catch (e) {
    throw new AfsError("NOT_FOUND", `${label}: cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? e})`);
  }
}

async function readStdin(io: Io): Promise<Buffer> {
  const stdin = io.invocation.stdin;
  if (stdin.isTTY) io.warn("afs: reading content from stdin; end it with Ctrl-D\n");
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

const placeholder = (name: string, required: boolean): string => (required ? `<${name}>` : `[${name}]`);

export function registerOp<A, R>(parent: Command, io: Io, def: OpCommand<A, R>): Command {
  const { props, required } = describeSchema(def.schema);
  const positionals = Object.entries(def.positionals ?? {});
  const flagEntries = Object.entries(def.flags ?? {});
  const cmd = leaf(parent, def.name, def.summary);
  for (const [cliName, arg] of positionals)
    cmd.argument(placeholder(cliName, required.has(arg)), props[arg]?.description);
  // Where the operation uses -w itself (grep's whole-word flag), the workspace is --workspace only.
  workspaceOption(cmd, !flagEntries.some(([flags]) => flags.startsWith("-w,")));

  const options = flagEntries.map(([flags, arg]) => {
    const option = new Option(flags, props[arg]?.description ?? "");
    if (required.has(arg) && arg !== def.content) option.makeOptionMandatory();
    cmd.addOption(option);
    return { option, arg };
  });
  for (const [flags, help] of Object.entries(def.accepted ?? {})) cmd.option(flags, help);
  if (def.content) {
    const contentArg = def.content;
    cmd.option("--content <text>", `${props[contentArg]?.description ?? "the content"} Read from stdin when omitted.`);
  }
  /** How errors name each argument: the flag or <positional> the user typed. */
  const labels: Record<string, string> = {};
  for (const [cliName, arg] of positionals) labels[arg] = `<${cliName}>`;
  for (const { option, arg } of options) labels[arg] = option.long ?? option.flags;
  if (def.content) labels[def.content] = "--content";

  cmd.action(async (...params: unknown[]) => {
    const command = params[params.length - 1] as Command;
    const flags = command.opts<JsonFlag & Record<string, unknown>>();
    const raw: Record<string, unknown> = { ...(flags.json && def.jsonFixed ? def.jsonFixed : def.fixed) };
    for (const [i, [, arg]] of positionals.entries()) {
      if (params[i] !== undefined) raw[arg] = await coerce(params[i], props[arg], labels[arg] ?? arg, io);
    }
    for (const { option, arg } of options) {
      const value = flags[option.attributeName()];
      if (value !== undefined) raw[arg] = await coerce(value, props[arg], labels[arg] ?? arg, io);
    }
    if (def.content) {
      const text = flags.content;
      if (typeof text === "string") raw[def.content] = text;
      else {
        const bytes = await readStdin(io);
        // Bytes stay bytes where the operation takes base64; otherwise stdin is UTF-8 text.
        if (props.encoding) Object.assign(raw, { [def.content]: bytes.toString("base64"), encoding: "base64" });
        else raw[def.content] = bytes.toString("utf8");
      }
    }
    const parsed = def.schema.safeParse(raw);
    if (!parsed.success) throw fromZod(parsed.error, labels);
    const args = parsed.data;
    await io.withWorkspace(
      command,
      async (afs, workspace) => {
        const volume = await afs.workspaces.volume(workspace);
        if (def.stream && !flags.json) return def.stream(volume, args, io);
        const result = await def.run(volume, args, { indexes: afs.indexes, io });
        if (def.raw && !flags.json) io.write(def.raw(result));
        else io.emit(flags, result, (r) => def.render(r, args, io));
      },
      { once: true },
    );
  });
  return cmd;
}
