// An engine reads its settings from the environment it is given, once, when it opens: never from
// this process's environment, and relative paths from the directory it is given.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Afs } from "../../src/workspace/afs.js";
import { tempDir } from "../helpers/tmp.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir("afs-settings-"));
});
afterAll(() => cleanup());

describe("Afs.open({ env, cwd })", () => {
  it("takes home, store, actor and workspace from env, relative ones from cwd", async () => {
    const afs = await Afs.open({
      env: { AFS_HOME: "home", AFS_STORE: "sqlite:data.db", AFS_ACTOR: "robot", AFS_WORKSPACE: "w" },
      cwd: dir,
    });
    try {
      expect(afs.home).toBe(join(dir, "home"));
      expect(existsSync(join(dir, "data.db"))).toBe(true);
      expect(afs.settings.actor).toBe("robot");
      await afs.workspaces.create("w");
      expect(await afs.workspaces.resolve()).toBe("w");
      expect((await afs.checkpoints.create("w", { name: "c" })).checkpoint.actor).toBe("robot");
    } finally {
      await afs.close();
    }
  });

  it("does not read this process's environment when given one", async () => {
    const saved = process.env.AFS_WORKSPACE;
    process.env.AFS_WORKSPACE = "from-process";
    try {
      const afs = await Afs.open({ env: { AFS_HOME: join(dir, "other") }, cwd: dir });
      try {
        await expect(afs.workspaces.resolve()).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
      } finally {
        await afs.close();
      }
    } finally {
      if (saved === undefined) delete process.env.AFS_WORKSPACE;
      else process.env.AFS_WORKSPACE = saved;
    }
  });
});
