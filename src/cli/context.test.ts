import { describe, expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import { DEFAULT_TEXT_CACHE_BYTES } from "../core/settings.js";
import { type EngineRequest, ownEngines } from "./context.js";

describe("ownEngines", () => {
  it("opens an engine for one call with a small text cache, unless AFS_TEXT_CACHE_MB says otherwise", async () => {
    const { dir, cleanup } = await tempDir("afs-home-");
    const engines = ownEngines();
    try {
      const cache = (request: Partial<EngineRequest>) =>
        engines.use(
          { home: dir, env: {}, cwd: dir, surface: "cli", ...request },
          async (afs) => afs.settings.textCacheBytes,
        );
      expect(await cache({ once: true })).toBe(16 * 1024 * 1024);
      expect(await cache({})).toBe(DEFAULT_TEXT_CACHE_BYTES);
      expect(await cache({ once: true, env: { AFS_TEXT_CACHE_MB: "64" } })).toBe(64 * 1024 * 1024);
    } finally {
      await engines.closeAll();
      await cleanup();
    }
  });
});
