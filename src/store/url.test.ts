import { describe, expect, it } from "vitest";
import { maskStoreUrl } from "./url.js";

describe("maskStoreUrl", () => {
  it("masks the password of the userinfo, whatever it holds", () => {
    expect(maskStoreUrl("redis://user:secret@127.0.0.1:6379/0")).toBe("redis://user:***@127.0.0.1:6379/0");
    expect(maskStoreUrl("rediss://:secret@host:6380")).toBe("rediss://:***@host:6380");
    expect(maskStoreUrl("redis://user:se@c/r:et@host/1")).toBe("redis://user:***@host/1");
  });

  it("leaves URLs without a password as they are", () => {
    for (const url of ["redis://host:6379/0", "redis://user@host", "sqlite:/tmp/a@b/afs.db", "/tmp/afs.db", ""]) {
      expect(maskStoreUrl(url)).toBe(url);
    }
  });
});
