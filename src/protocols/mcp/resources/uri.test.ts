import { describe, expect, it } from "vitest";
import { isAfsError } from "../../../core/errors.js";
import { parseResourceUri, resourceUri } from "./uri.js";

const code = (uri: string): string => {
  try {
    parseResourceUri(uri);
  } catch (e) {
    if (isAfsError(e)) return e.code;
    throw e;
  }
  return "OK";
};

describe("resource URIs", () => {
  it("round-trips names with spaces, reserved characters and Unicode", () => {
    for (const path of ["/a.txt", "/src/main.go", "/a b/c#d?e%f.txt", "/ünï/çødé ☃.md", "/x@y:z/+&=,;!$'()*"]) {
      for (const checkpoint of [null, "v1.0"]) {
        const uri = resourceUri("demo", path, checkpoint);
        expect(uri.startsWith(checkpoint ? "afs://demo@v1.0/" : "afs://demo/")).toBe(true);
        expect(parseResourceUri(uri)).toEqual({ workspace: "demo", checkpoint, path });
      }
    }
    expect(resourceUri("demo", "/a b/c#d?.txt")).toBe("afs://demo/a%20b/c%23d%3F.txt");
  });

  it("refuses anything that climbs, smuggles a separator or is not an afs URI", () => {
    expect(code("afs://demo/a/../b")).toBe("INVALID_PATH");
    expect(code("afs://demo/a/%2E%2E/%2e%2e/etc/passwd")).toBe("INVALID_PATH");
    expect(code("afs://demo/..%2F..%2Fetc")).toBe("INVALID_PATH");
    expect(code("afs://demo/a%2Fb")).toBe("INVALID_PATH");
    expect(code("afs://demo/a%5Cb")).toBe("INVALID_PATH");
    expect(code("afs://demo/a%00b")).toBe("INVALID_PATH");
    expect(code("afs://demo//a")).toBe("INVALID_PATH");
    expect(code("afs://demo/./a")).toBe("INVALID_PATH");
    expect(code("afs://demo/a%zz")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo/a?x=1")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo/a#top")).toBe("INVALID_ARGUMENT");
    expect(code("file:///etc/passwd")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo/")).toBe("INVALID_ARGUMENT");
    expect(code("afs:///a.txt")).toBe("INVALID_ARGUMENT");
    expect(code("afs://..%2Fother/a.txt")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo@../a.txt")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo@/a.txt")).toBe("INVALID_ARGUMENT");
    expect(code("afs://demo/a.txt")).toBe("OK");
  });
});
