import { describe, expect, it } from "vitest";
import { DEFAULT_TEXT_CACHE_BYTES, homeOf, readSettings, storeUrlFrom } from "./settings.js";

describe("readSettings", () => {
  it("takes the AFS_* settings and the few others an engine reads, nothing else", () => {
    const s = readSettings({
      AFS_HOME: "h",
      AFS_STORE: "redis://x",
      AFS_ACTOR: "me",
      AFS_WORKSPACE: "w",
      AFS_DEBUG: "1",
      AFS_TEXT_CACHE_MB: "1.5",
      HOME: "/home/me",
      OPENAI_API_KEY: "k",
      PATH: "/bin",
      TZ: "UTC",
      AFS_UNSET: undefined,
    });
    expect(s).toMatchObject({ home: "h", store: "redis://x", actor: "me", workspace: "w", debug: true });
    expect(s.textCacheBytes).toBe(1.5 * 1024 * 1024);
    expect(s.env).toEqual({
      AFS_ACTOR: "me",
      AFS_DEBUG: "1",
      AFS_HOME: "h",
      AFS_STORE: "redis://x",
      AFS_TEXT_CACHE_MB: "1.5",
      AFS_WORKSPACE: "w",
      HOME: "/home/me",
      OPENAI_API_KEY: "k",
    });
  });

  it("defaults what is unset or unusable", () => {
    const s = readSettings({ AFS_DEBUG: "yes", AFS_TEXT_CACHE_MB: "lots" });
    expect(s).toMatchObject({ home: undefined, store: undefined, actor: undefined, workspace: undefined });
    expect(s.debug).toBe(false);
    expect(s.textCacheBytes).toBe(DEFAULT_TEXT_CACHE_BYTES);
  });
});

describe("where relative paths lead", () => {
  it("a home: --home, else AFS_HOME, else HOME/.afs, from the caller's directory", () => {
    const account = () => "/account";
    expect(homeOf(readSettings({}), "/cwd", account)).toBe("/account/.afs");
    expect(homeOf(readSettings({ HOME: "/u" }), "/cwd", account)).toBe("/u/.afs");
    expect(homeOf(readSettings({ AFS_HOME: "data" }), "/cwd", account)).toBe("/cwd/data");
    expect(homeOf(readSettings({ AFS_HOME: "data" }), "/cwd", account, "../given")).toBe("/given");
  });

  it("a SQLite store by a relative path is the caller's directory's file; other URLs stay as given", () => {
    expect(storeUrlFrom("sqlite:rel.db", "/cwd")).toBe("sqlite:/cwd/rel.db");
    expect(storeUrlFrom("rel.db", "/cwd")).toBe("/cwd/rel.db");
    expect(storeUrlFrom("file:rel.db", "/cwd")).toBe("file:///cwd/rel.db");
    for (const url of [
      "sqlite:/abs.db",
      "/abs.db",
      "file:///abs.db",
      "sqlite:///abs.db",
      "redis://h/0",
      "sqlite:",
      "",
    ]) {
      expect(storeUrlFrom(url, "/cwd")).toBe(url);
    }
  });

  it("a local embedding model directory is the caller's, made absolute when the caller's directory is known", () => {
    expect(readSettings({ AFS_EMBED_MODEL_DIR: "models/mini" }, "/cwd").env.AFS_EMBED_MODEL_DIR).toBe(
      "/cwd/models/mini",
    );
    expect(readSettings({ AFS_EMBED_MODEL_DIR: "/abs/mini" }, "/cwd").env.AFS_EMBED_MODEL_DIR).toBe("/abs/mini");
    // Without a directory (a pure read of the variables) it stays as given.
    expect(readSettings({ AFS_EMBED_MODEL_DIR: "models/mini" }).env.AFS_EMBED_MODEL_DIR).toBe("models/mini");
  });
});
