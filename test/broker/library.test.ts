// The broker as a library in an MCP host: an official-SDK Client with attachBroker starts our SDK
// server (fixture-server.ts) as a real child over stdio, and the server does every operation
// through the BrokeredFiles helper, on a directory root and on an afs workspace root.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { allowConsent } from "../../src/access/consent.js";
import { attachBroker } from "../../src/protocols/broker/attach.js";
import { BrokerHost, type RootSpec } from "../../src/protocols/broker/host.js";
import { BROKER_CAPABILITIES } from "../../src/protocols/broker/wire.js";
import type { Afs } from "../../src/workspace/afs.js";
import { ROOT } from "../cli/run.js";
import { tempAfs } from "../helpers/tmp.js";

const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;

interface StepResult {
  ok?: Record<string, unknown>;
  error?: { code: string; message: string };
}

let t: { afs: Afs; home: string; cleanup: () => Promise<void> };
let dir: string;
beforeEach(async () => {
  t = await tempAfs();
  dir = join(t.home, "project");
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "src", "a.txt"), "alpha\n");
  await t.afs.workspaces.import("notes", dir);
});
afterEach(() => t.cleanup());

/** A host Client with the broker attached, connected to the fixture server as a child process. */
async function connect(
  roots: RootSpec[],
): Promise<{ run: (steps: object[]) => Promise<StepResult[]>; close(): Promise<void> }> {
  const host = await BrokerHost.open({ afs: t.afs, roots, consent: allowConsent() });
  const client = new Client({ name: "library-host", version: "1.0.0" }, { capabilities: BROKER_CAPABILITIES });
  attachBroker(client, host);
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ["--import", TSX, join(ROOT, "test/broker/fixture-server.ts")],
      stderr: "ignore",
    }),
  );
  return {
    run: async (steps) => {
      const r = await client.callTool({ name: "run", arguments: { steps } });
      return (r.structuredContent as { value: StepResult[] }).value;
    },
    close: async () => {
      await client.close();
      await host.close();
    },
  };
}

/** The name the fixture server gives in initialize, which the broker records its changes under. */
const SERVER_NAME = "fixture-server";

const STEPS = [
  { op: "consent", message: "edit the project", paths: ["."] },
  { op: "read", path: "src/a.txt" },
  { op: "write", path: "src/b.txt", content: "beta\n" },
  { op: "list", path: "src" },
  { op: "rename", from: "src/b.txt", to: "src/c.txt" },
  { op: "delete", path: "src/a.txt" },
  { op: "read", path: "../outside.txt" },
  { op: "read", path: "src/missing.txt" },
];

describe("the broker library with a server as a child process", () => {
  for (const kind of ["directory", "workspace"] as const) {
    it(`serves every operation on a ${kind} root`, async () => {
      const session = await connect([kind === "directory" ? { dir } : { workspace: "notes" }]);
      try {
        const [consent, read, write, list, rename, del, outside, missing] = await session.run(STEPS);
        expect(consent?.ok).toMatchObject({ granted: true });
        expect(read?.ok).toMatchObject({ content: "alpha\n", eof: true });
        expect(write?.error).toBeUndefined();
        expect(((list?.ok ?? []) as unknown as { name: string }[]).map((e) => e.name).sort()).toEqual([
          "a.txt",
          "b.txt",
        ]);
        expect(rename?.error).toBeUndefined();
        expect(del?.error).toBeUndefined();
        expect(outside?.error?.code).toBe("INVALID_PATH");
        expect(missing?.error?.code).toBe("FILE_NOT_FOUND");
      } finally {
        await session.close();
      }
      if (kind === "directory") {
        expect(readFileSync(join(dir, "src", "c.txt"), "utf8")).toBe("beta\n");
        expect(() => readFileSync(join(dir, "src", "a.txt"))).toThrow();
      } else {
        // The server edited a versioned workspace: the disk is untouched, the live state changed.
        expect(readFileSync(join(dir, "src", "a.txt"), "utf8")).toBe("alpha\n");
        const volume = await t.afs.workspaces.volume("notes");
        expect((await volume.readFile("/src/c.txt")).toString()).toBe("beta\n");
        expect(await volume.stat("/src/a.txt")).toBeNull();
        expect((await t.afs.workspaces.get("notes")).dirty).toBe(true);
        // Each change is the brokered server's (by the name it gave in initialize), through the broker.
        const events = (await t.afs.events.list("notes")).events.filter((e) => e.op !== "checkpoint");
        expect(new Set(events.map((e) => `${e.actor}/${e.surface}`))).toEqual(new Set([`${SERVER_NAME}/broker`]));
      }
    });
  }
});
