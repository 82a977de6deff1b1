// A program that embeds afs the way a host or a tool would, through the package's entry points
// only. test/package/pack.test.ts type-checks it under strict against the installed tarball, then
// runs it: every entry point must resolve, carry types, and work.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Afs,
  AfsError,
  ERROR_CODES,
  type ErrorCode,
  grep,
  grepArgs,
  list,
  listArgs,
  type ReadResult,
  read,
  readArgs,
  replace,
  replaceArgs,
  VERSION,
  write,
  writeArgs,
} from "afs";
import { AcpClient, AcpFiles, Approvals, resolveLimits as acpLimits, ndJsonStream } from "afs/acp";
import { AuditLog, allowConsent, attachBroker, BrokerHost, denyConsent, parseRootSpec } from "afs/broker";
import { BrokeredFileError, BrokeredFiles, clientSupportsBrokering } from "afs/broker-client";
import { createMcpServer, type McpSessionOptions, resolveLimits } from "afs/mcp";

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`consumer: ${what}`);
}

const home = await mkdtemp(join(tmpdir(), "afs-consumer-"));
const afs = await Afs.open({ home });
try {
  // The engine: a workspace, a file written and read through the operations, a checkpoint, a diff.
  await afs.workspaces.create("demo", { description: "from the consumer" });
  const volume = await afs.workspaces.volume("demo");
  await write(volume, writeArgs.parse({ path: "/hello.txt", content: "hello, world\n" }));
  const file: ReadResult = await read(volume, readArgs.parse({ path: "/hello.txt" }));
  check(file.content === "hello, world\n", `read gave ${JSON.stringify(file.content)}`);
  const { checkpoint } = await afs.checkpoints.create("demo", { name: "v1" });
  await replace(volume, replaceArgs.parse({ path: "/hello.txt", old: "world", new: "agents" }));
  const diff = await afs.checkpoints.diff("demo", checkpoint.name);
  check(diff.summary.modified === 1, `diff: ${JSON.stringify(diff.summary)}`);
  const listed = await list(volume, listArgs.parse({ path: "/" }));

  // AfsError and its codes.
  const code: ErrorCode = "NOT_FOUND";
  check(ERROR_CODES.includes(code), "ERROR_CODES lists NOT_FOUND");
  const missing = await read(volume, readArgs.parse({ path: "/nope" })).catch((e: unknown) => e);
  check(missing instanceof AfsError && missing.code === "NOT_FOUND", "a missing file is an AfsError NOT_FOUND");

  // afs/mcp: the afs tools as an MCP server (not connected here).
  const session: McpSessionOptions = {
    afs,
    workspace: "demo",
    pinned: false,
    profile: "workspace-rw",
    transport: "stdio",
    limits: resolveLimits(),
  };
  const server = createMcpServer(session);

  // afs/acp: the ACP client filesystem (no agent started here).
  const approvals = new Approvals("deny");
  const files = new AcpFiles({ limits: acpLimits(), approvals });

  // afs/broker: a host serving a workspace root, ready to attach to an SDK Client.
  const host = await BrokerHost.open({
    afs,
    roots: [parseRootSpec("afs:demo:ro")],
    consent: allowConsent("read"),
    audit: new AuditLog({ onEntry: () => {} }),
  });
  const roots = host.roots();
  check(roots.length === 1, `broker roots: ${JSON.stringify(roots)}`);
  await host.close();

  // afs/broker-client: what a brokered MCP server uses.
  const refused = new BrokeredFileError("FILE_NOT_FOUND", "no such file", -31001, { path: "a.txt" });
  check(refused.path === "a.txt", "BrokeredFileError.path");

  const values = {
    AcpClient,
    grep,
    grepArgs: grepArgs.parse,
    ndJsonStream,
    attachBroker,
    denyConsent,
    BrokeredFiles,
    clientSupportsBrokering,
    connect: server.connect,
  };
  for (const [name, value] of Object.entries(values)) check(typeof value === "function", `${name} is exported`);
  console.log(
    JSON.stringify({
      version: VERSION,
      content: file.content,
      diff: diff.summary,
      listed: listed.items.length,
      buffers: files.buffers.constructor.name,
    }),
  );
} finally {
  await afs.close();
  await rm(home, { recursive: true, force: true });
}
