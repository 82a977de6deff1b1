// `afs broker --root DIR[:ro] … [--consent MODE] [--audit FILE] -- SERVER CMD…`: an MCP host starts
// this in place of an MCP server; it starts SERVER as a child and sits between the two, answering
// the server's roots/list and files/* itself (confined to the roots, with consent and an audit
// log) and passing everything else through. Our stdout belongs to the protocol; notes go to stderr.
import { stat } from "node:fs/promises";
import { basename, resolve } from "node:path";
import type { Command } from "commander";
import { ApprovalQueue, whereToDecide } from "../../access/approval-queue.js";
import { AuditLog } from "../../access/audit.js";
import {
  type AskConsent,
  allowConsent,
  askConsent,
  type ConsentProvider,
  denyConsent,
  policyFileConsent,
} from "../../access/consent.js";
import { consoleConsent } from "../../access/console-approvals.js";
import { AfsError } from "../../core/errors.js";
import { ndjsonChannel } from "../../protocols/broker/channel.js";
import { BrokerHost } from "../../protocols/broker/host.js";
import { BrokerProxy } from "../../protocols/broker/proxy.js";
import { parseRootSpec, type RootSpec } from "../../protocols/broker/roots.js";
import type { Afs } from "../../workspace/afs.js";
import type { Io } from "../context.js";
import { ExitStatus } from "../errors.js";
import { spawnGroup } from "../process-group.js";
import { leaf } from "./leaf.js";

interface BrokerFlags {
  root: string[];
  consent: string;
  audit?: string;
  chunkBytes?: string;
  timeout?: string;
}

/** What a --consent word is made from: the terminal/elicitation ask, the store (for console), a note line. */
interface ConsentInputs {
  ask: AskConsent;
  afs: Afs | undefined;
  note: (line: string) => void;
}

/** --consent words; anything else is a policy file path. */
const CONSENT_MODES: Readonly<Record<string, (inputs: ConsentInputs) => ConsentProvider>> = {
  allow: () => allowConsent(),
  deny: () => denyConsent(),
  ask: ({ ask }) => askConsent(ask),
  console: ({ afs, note }) => {
    if (!afs) throw new AfsError("INTERNAL", "--consent console needs the store");
    return consoleConsent(new ApprovalQueue(afs.approvals), {
      process: "afs broker",
      onWaiting: (id, title) =>
        note(`afs broker: ${title}: ${whereToDecide(afs.settings.env.AFS_CONSOLE_URL)} (request ${id})`),
    });
  },
};

/** Modes that keep their questions in the store, so the broker opens it even without a workspace root. */
const STORE_MODES = new Set(["console"]);

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function registerBroker(program: Command, io: Io): void {
  leaf(program, "broker", "run an MCP server with afs brokering its file access (roots/list, files/*)", false)
    .usage("--root DIR[:ro] [options] -- SERVER [ARGS...]")
    .argument("<server...>", "the MCP server's command line, after --")
    .option("--root <spec>", "a root the server may use: DIR[:ro] or afs:WORKSPACE[:ro] (repeatable)", collect)
    .option(
      "--consent <mode>",
      "what files/consent answers: allow, deny, ask (an elicitation form, else the terminal), console (a person in the afs console, through the store), or POLICY.json",
      "ask",
    )
    .option("--audit <file>", "append one JSON line per file operation (never content) to this file")
    .option("--chunk-bytes <n>", "largest files/read or files/write chunk in bytes (default 1 MiB)")
    .option("--timeout <seconds>", "how long one file operation may take (default 60)")
    .action((server: string[], flags: BrokerFlags, cmd: Command) => runBroker(server, flags, cmd, io));
}

async function runBroker(command: string[], flags: BrokerFlags, cmd: Command, io: Io): Promise<void> {
  const note = (line: string): void => io.warn(`${line}\n`);
  const roots = await parseRoots(flags.root ?? [], io.cwd);
  const chunkBytes = positive(flags.chunkBytes, "--chunk-bytes", "a number of bytes");
  const timeoutS = positive(flags.timeout, "--timeout", "a number of seconds");
  let proxy: BrokerProxy | null = null;
  const ask: AskConsent = async (request) =>
    proxy ? proxy.ask({ message: request.message, paths: [...request.paths], hostPaths: [...request.hostPaths] }) : [];
  const named = CONSENT_MODES[flags.consent];
  const policy = named ? null : policyFile(flags.consent, io.cwd);
  if (policy) await policyExists(flags.consent, io.cwd);
  const mode = named ?? (() => policy as ConsentProvider);
  // A workspace root or console consent needs the store; a broker of plain directories never opens (or creates) one.
  const run = async (afs: Afs | undefined): Promise<void> => {
    let host: BrokerHost | null = null;
    const consent = mode({ ask, afs, note });
    try {
      host = await BrokerHost.open({
        ...(afs ? { afs } : {}),
        roots,
        consent,
        ...(flags.audit ? { audit: new AuditLog({ file: io.path(flags.audit) }) } : {}),
        ...(chunkBytes === undefined ? {} : { chunkBytes }),
        ...(timeoutS === undefined ? {} : { timeoutMs: timeoutS * 1000 }),
      });
      const server = await spawnGroup(command, "server", io.cwd, { ...io.env });
      const name = basename(command[0] ?? "server");
      const serverSide = ndjsonChannel(server.stdout, server.stdin, (l) =>
        note(`afs broker: not JSON from ${name}: ${l.slice(0, 200)}`),
      );
      // The protocol owns this process's own stdin and stdout (afs broker is never run for another caller).
      const hostSide = ndjsonChannel(process.stdin, process.stdout, (l) =>
        note(`afs broker: not JSON from the host: ${l.slice(0, 200)}`),
      );
      let serverSpoke = false;
      serverSide.onMessage(() => {
        serverSpoke = true;
      });
      proxy = new BrokerProxy({ host, hostSide, serverSide, serverName: name, log: note });
      note(
        `afs broker: ${name} with roots ${host
          .roots()
          .map((r) => r.name)
          .join(", ")}, consent: ${consent.kind}`,
      );
      const hostGone = new Promise<"host">((resolve) => proxy?.onClose((side) => side === "host" && resolve("host")));
      const onSignal = (): void => server.kill();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      try {
        const first = await Promise.race([hostGone, server.exited]);
        if (first === "host") {
          // The host closed our stdin: that is the end of the session (as for any stdio server).
          await server.stop();
          return;
        }
        proxy.close();
        if (!serverSpoke) {
          throw new AfsError(
            "IO_ERROR",
            `the server (${command.join(" ")}) ${first.text} before answering anything; check its command line`,
          );
        }
        note(`afs broker: ${name} ${first.text}`);
        if (first.status !== 0) throw new ExitStatus(first.status);
      } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        // Our stdin may still be open (the server went first): stop reading so the process can end.
        process.stdin.destroy();
      }
    } finally {
      if (host) await host.close();
      else consent.close?.();
      // Console grants end in the store with the broker, so the console stops listing them.
      if ("closed" in consent && typeof consent.closed === "function") await consent.closed();
    }
  };
  if (roots.some((r) => r.workspace !== undefined) || STORE_MODES.has(flags.consent)) await io.withAfs(cmd, run);
  else await run(undefined);
}

/** The roots as given, directories taken from the caller's directory `cwd`. */
async function parseRoots(texts: readonly string[], cwd: string): Promise<RootSpec[]> {
  if (texts.length === 0) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      "no --root given; pass --root DIR (or afs:WORKSPACE) for each place the server may use",
    );
  }
  const roots = texts.map(parseRootSpec).map((r) => (r.dir === undefined ? r : { ...r, dir: resolve(cwd, r.dir) }));
  for (const [i, r] of roots.entries()) {
    if (r.dir === undefined) continue;
    const st = await stat(r.dir).catch(() => null);
    if (!st?.isDirectory()) {
      throw new AfsError("NOT_FOUND", `--root ${parseRootSpec(texts[i] as string).dir}: no such directory`);
    }
  }
  return roots;
}

function policyFile(path: string, cwd: string): ConsentProvider {
  if (!path.endsWith(".json")) {
    throw new AfsError("INVALID_ARGUMENT", `--consent ${path}: use allow, deny, ask or the path of a JSON policy file`);
  }
  return policyFileConsent(resolve(cwd, path));
}

async function policyExists(path: string, cwd: string): Promise<void> {
  const st = await stat(resolve(cwd, path)).catch(() => null);
  if (!st?.isFile()) throw new AfsError("NOT_FOUND", `--consent ${path}: no such policy file`);
}

function positive(text: string | undefined, flag: string, what: string): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!(n > 0)) throw new AfsError("INVALID_ARGUMENT", `${flag} must be ${what}; got ${text}`);
  return n;
}
