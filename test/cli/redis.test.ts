// The built CLI on a Redis store, end to end: the bundled command line loads the Redis client
// lazily, two invocations share workspaces through Redis, `afs status` masks the password, and an
// unreachable server is one clear line.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storeEnabled } from "../contract/stores.js";
import { freePort, type RedisServer, startRedis } from "../helpers/redis-server.js";
import { type Cli, cli, ensureBuilt } from "./run.js";

describe.runIf(storeEnabled("redis"))("afs on a Redis store", () => {
  let afs: Cli;
  let server: RedisServer;
  let store: string;
  beforeAll(async () => {
    ensureBuilt();
    afs = await cli();
    server = await startRedis(["--requirepass", "cli-s3cret"]);
    store = `redis://:cli-s3cret@127.0.0.1:${server.port}/0`;
  });
  afterAll(async () => {
    await afs?.cleanup();
    await server?.stop();
  });

  it("shares workspaces between invocations and never prints the password", () => {
    const env = { AFS_STORE: store };
    expect(afs.run(["ws", "create", "demo"], { env }).status).toBe(0);
    expect(afs.run(["fs", "write", "/a.txt", "-w", "demo"], { env, input: "hello\n" }).status).toBe(0);
    expect(afs.run(["cp", "create", "first", "-w", "demo"], { env }).status).toBe(0);
    const list = afs.run(["ws", "list", "--json"], { env });
    expect(JSON.parse(list.stdout).map((w: { name: string }) => w.name)).toEqual(["demo"]);
    const status = afs.run(["status"], { env });
    expect(status.status).toBe(0);
    expect(status.stdout).toContain(`redis://:***@127.0.0.1:${server.port}/0`);
    const fsck = afs.run(["fsck"], { env });
    expect(fsck.status, fsck.stderr).toBe(0);
    for (const r of [list, status, fsck]) expect(r.stdout + r.stderr).not.toContain("cli-s3cret");
  });

  it("says in one line that an unreachable server cannot be reached", async () => {
    const port = await freePort();
    const r = afs.run(["ws", "list"], { env: { AFS_STORE: `redis://:pw@127.0.0.1:${port}/0` } });
    expect(r.status).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`127.0.0.1:${port}`);
    expect(r.stderr).toContain("IO_ERROR");
    expect(r.stderr).not.toContain(":pw@");
  });
});
