// How `afs broker` puts a consent question to the person: an MCP elicitation form (when the host
// supports it), else the terminal (/dev/tty, when one opens), else a refusal that says how to allow.
import { open } from "node:fs/promises";
import { createInterface } from "node:readline/promises";

export interface ConsentQuestion {
  server: string;
  message: string;
  paths: string[];
  /** The same places as host directories, where there is one (for a person to recognise). */
  hostPaths?: (string | null)[];
}

const shown = (q: ConsentQuestion, i: number): string => {
  const host = q.hostPaths?.[i];
  return host ? `${q.paths[i]} (${host})` : (q.paths[i] ?? "");
};

/** Beyond this many paths the form is one allow/deny choice instead of one checkbox per path. */
const MAX_PATH_FIELDS = 20;

const fieldOf = (i: number): string => `path_${i}`;

/** The elicitation/create params: one boolean per requested path (or one allow/deny enum). */
export function elicitationParams(q: ConsentQuestion): Record<string, unknown> {
  const text = `${q.server} asks for file access: ${q.message}\n${q.paths.map((_, i) => `  ${shown(q, i)}`).join("\n")}`;
  const perPath = q.paths.length <= MAX_PATH_FIELDS;
  const properties = perPath
    ? Object.fromEntries(
        q.paths.map((_, i) => [
          fieldOf(i),
          { type: "boolean", title: shown(q, i), description: `allow ${q.server} to use ${shown(q, i)}` },
        ]),
      )
    : {
        decision: {
          type: "string",
          title: `allow all ${q.paths.length} paths?`,
          enum: ["allow", "deny"],
          enumNames: ["Allow", "Deny"],
        },
      };
  return {
    message: text,
    requestedSchema: { type: "object", properties, required: perPath ? [] : ["decision"] },
  };
}

/** The approved paths in an elicitation answer (nothing unless the person accepted). */
export function approvedFromElicitation(q: ConsentQuestion, result: unknown): string[] {
  const r = result as { action?: unknown; content?: Record<string, unknown> } | null;
  if (r?.action !== "accept") return [];
  const content = r.content ?? {};
  if (q.paths.length > MAX_PATH_FIELDS) return content.decision === "allow" ? [...q.paths] : [];
  return q.paths.filter((_, i) => content[fieldOf(i)] === true);
}

// Process-wide on purpose: a process has one terminal, and one question at a time is asked on it.
let ttyQueue: Promise<unknown> = Promise.resolve();

/** Asks on /dev/tty, one question at a time; null when there is no terminal to ask on. */
export function askOnTty(q: ConsentQuestion): Promise<string[] | null> {
  const next = ttyQueue.then(() => askOnce(q));
  ttyQueue = next.catch(() => {});
  return next;
}

async function askOnce(q: ConsentQuestion): Promise<string[] | null> {
  const tty = await open("/dev/tty", "r+").catch(() => null);
  if (!tty) return null;
  const input = tty.createReadStream({ autoClose: false });
  const output = tty.createWriteStream({ autoClose: false });
  const rl = createInterface({ input, output, terminal: false });
  try {
    output.write(`afs broker: ${q.server} asks for file access: ${q.message}\n`);
    const approved: string[] = [];
    for (const [i, path] of q.paths.entries()) {
      const answer = await rl.question(`afs broker: allow ${shown(q, i)}? [y/N] `);
      if (/^y(es)?$/i.test(answer.trim())) approved.push(path);
    }
    return approved;
  } catch {
    return [];
  } finally {
    rl.close();
    input.destroy();
    output.destroy();
    await tty.close().catch(() => {});
  }
}

export const HOW_TO_ALLOW =
  "no way to ask (the host has no elicitation and there is no terminal); " +
  "start afs broker with --consent allow, or --consent POLICY.json listing the paths to allow";
