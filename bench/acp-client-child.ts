// The client side of bench/acp-latency.ts: an ACP client over this process's stdin/stdout that
// answers fs/read_text_file and fs/write_text_file either through afs (AcpClient + AcpFiles, the
// session directory confined by a LocalDirVolume) or through plain node:fs/promises readFile and
// writeFile (no confinement, no checks: the floor any client pays for JSON-RPC over pipes).
// It sends initialize and session/new with cwd = DIR, then serves requests until stdin closes.
// Run (by the benchmark): node --import tsx bench/acp-client-child.ts afs|plain DIR
import { readFile, writeFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { Approvals } from "../src/access/approvals.js";
import { resolveLimits } from "../src/access/limits.js";
import { AcpClient } from "../src/protocols/acp/client.js";
import { AcpFiles } from "../src/protocols/acp/files.js";

const [kind, dir] = process.argv.slice(2);
if ((kind !== "afs" && kind !== "plain") || !dir) {
  console.error("usage: node --import tsx bench/acp-client-child.ts afs|plain DIR");
  process.exit(2);
}

const stream = acp.ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);

/** Lines [line, line + limit) 1-based, endings kept: what ACP's line/limit mean. Scans with indexOf
 * and copies only the window, as a careful minimal client would. */
function windowOf(text: string, line?: number | null, limit?: number | null): string {
  if ((line === undefined || line === null) && (limit === undefined || limit === null)) return text;
  let start = 0;
  for (let n = 1; n < Math.max(1, line ?? 1) && start < text.length; n++) {
    const nl = text.indexOf("\n", start);
    start = nl === -1 ? text.length : nl + 1;
  }
  if (limit === undefined || limit === null) return text.slice(start);
  let end = start;
  for (let n = 0; n < limit && end < text.length; n++) {
    const nl = text.indexOf("\n", end);
    end = nl === -1 ? text.length : nl + 1;
  }
  return text.slice(start, end);
}

let closed: Promise<void>;
if (kind === "afs") {
  const approvals = new Approvals("allow");
  const files = new AcpFiles({ limits: resolveLimits({}, {}), approvals });
  const client = AcpClient.connect(stream, { files, approvals });
  closed = client.closed;
  await client.initialize();
  await client.newSession({ cwd: dir });
} else {
  const connection = acp
    .client({ name: "plain-fs" })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => ({
      content: windowOf(await readFile(params.path, "utf8"), params.line, params.limit),
    }))
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      await writeFile(params.path, params.content);
      return {};
    })
    .connect(stream);
  closed = connection.closed;
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: "plain-fs", version: "1.0.0" },
  });
  await connection.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] });
}
// session/new is answered before the client has registered the session (afs opens its volume
// then): the benchmark waits for this line on stderr before its first request.
process.stderr.write("ready\n");
// stdin's end closes the connection; then nothing is left to do.
await closed;
process.exit(0);
