// The library face end to end with the official SDK: a Client with attachBroker connected to a
// Server whose tool reads a file through extra.sendRequest; capabilities, roots/list,
// list_changed, a wire error and files/changed notifications all cross the SDK unchanged.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListRootsResultSchema,
  McpError,
  RootsListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, expect, it } from "vitest";
import { z } from "zod";
import { allowConsent } from "../../src/access/consent.js";
import { attachBroker } from "../../src/protocols/broker/attach.js";
import { BrokerHost } from "../../src/protocols/broker/host.js";
import { changedParams, consentResult, readResult } from "../../src/protocols/broker/wire.js";
import { tempDir } from "../helpers/tmp.js";
import { until } from "./fixture.js";

let dir: string;
let other: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  const t = await tempDir("afs-broker-attach-");
  cleanup = t.cleanup;
  dir = join(t.dir, "project");
  other = join(t.dir, "other");
  const { mkdir } = await import("node:fs/promises");
  await mkdir(dir);
  await mkdir(other);
  await writeFile(join(dir, "hello.txt"), "hello from the host\n");
});
afterEach(() => cleanup());

it("serves files/* to an official-SDK server through attachBroker", async () => {
  const host = await BrokerHost.open({ roots: [{ dir }], consent: allowConsent() });
  const server = new Server({ name: "tool-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const granted = await extra.sendRequest(
      { method: "files/consent", params: { message: "read hello", requestedPaths: ["."] } },
      consentResult,
    );
    const read = await extra.sendRequest(
      { method: "files/read", params: { path: String(req.params.arguments?.path) } },
      readResult,
    );
    return { content: [{ type: "text", text: JSON.stringify({ granted, read }) }] };
  });
  const changed: z.infer<typeof changedParams>[] = [];
  server.setNotificationHandler(
    z.object({ method: z.literal("notifications/files/changed"), params: changedParams }),
    (n) => void changed.push(n.params),
  );
  let rootsChanged = 0;
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => void rootsChanged++);

  const client = new Client({ name: "afs", version: "0.1.0" });
  attachBroker(client, host);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(b), client.connect(a)]);

  const caps = server.getClientCapabilities();
  expect(caps?.experimental?.filesystemBrokering).toEqual({});
  expect(caps?.roots?.listChanged).toBe(true);

  const result = await client.callTool({ name: "read", arguments: { path: "hello.txt" } });
  const body = JSON.parse((result.content as { text: string }[])[0]?.text ?? "{}");
  expect(body.granted).toMatchObject({ granted: true, approvedPaths: ["."] });
  expect(body.read).toMatchObject({ content: "hello from the host\n", eof: true, encoding: "utf-8" });

  const roots = await server.request({ method: "roots/list" }, ListRootsResultSchema);
  expect(roots.roots).toEqual([{ uri: `file://${dir}`, name: "project" }]);

  // A wire error keeps its code and data across the SDK.
  const err = await server
    .request({ method: "files/read", params: { path: "../escape" } }, readResult)
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(McpError);
  expect(err).toMatchObject({ code: -31003, data: { code: "INVALID_PATH", afsCode: "INVALID_PATH" } });

  // Roots changing at run time: one notification per change, none for a no-op.
  await host.addRoot({ dir: other });
  await host.addRoot({ dir: other });
  await until(() => rootsChanged === 1);
  const two = await server.request({ method: "roots/list" }, ListRootsResultSchema);
  expect(two.roots.map((r) => r.name)).toEqual(["project", "other"]);
  await host.removeRoot("other");
  await host.removeRoot("nope");
  await until(() => rootsChanged === 2);

  // Watch notifications reach the server that asked.
  await server.request(
    { method: "files/watch", params: { path: ".", recursive: true } },
    z.object({ watchId: z.string() }),
  );
  await writeFile(join(dir, "new.txt"), "n");
  await until(() => changed.some((c) => c.path === "new.txt" && c.event === "created"));

  await client.close();
  await host.close();
});
