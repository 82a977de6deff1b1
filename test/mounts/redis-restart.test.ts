// Redis killed and started again under two running mounts: the sync reports the outage, keeps what
// changed meanwhile, and catches up once the store is back.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { redisFactory, storeEnabled } from "../contract/stores.js";
import { tree, until, World } from "./helpers.js";

describe.runIf(storeEnabled("redis"))("mounts across a Redis restart", () => {
  const redis = redisFactory().server;
  let world: World;
  afterEach(async () => {
    await world?.close();
  });

  it("catches up with a change made while Redis was down", async () => {
    world = new World(() => redis().url);
    const a = await world.machine("a");
    const b = await world.machine("b");
    const ws = world.workspace();
    await mkdir(a.dir, { recursive: true });
    await writeFile(join(a.dir, "f.txt"), "before");
    await world.mount(a, { workspace: ws });
    await world.mount(b, { workspace: ws });

    await redis().kill();
    await writeFile(join(a.dir, "f.txt"), "during");
    await writeFile(join(a.dir, "new.txt"), "during");
    await until(() => a.mount?.status().state === "error", "a to report the outage");
    expect(a.mount?.status().lastError).toBeTruthy();
    await redis().restart();
    await until(
      async () => {
        const t = await tree(b.dir);
        return t["f.txt"] === "during" && t["new.txt"] === "during";
      },
      "b to catch up",
      30_000,
    );
    await until(() => a.mount?.status().state === "running", "a to recover");
    await until(() => a.mount?.status().lastError === null, "a's outage error cleared once in step");
    expect(await tree(b.dir)).toEqual(await tree(a.dir));
  });
});
