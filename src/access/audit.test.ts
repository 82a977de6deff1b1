import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { tempDir } from "../../test/helpers/tmp.js";
import { AuditLog } from "./audit.js";

it("writes one JSON line per entry to a file and a callback, shortening long paths", async () => {
  const { dir, cleanup } = await tempDir();
  const lines: string[] = [];
  const log = new AuditLog({ file: join(dir, "audit.jsonl"), onEntry: (_e, line) => lines.push(line) });
  log.record({ server: "s", method: "files/read", path: "p/a.txt", bytes: 3, outcome: "ok", consentId: "c1" });
  log.record({ server: "s", method: "files/read", path: "x".repeat(1000), outcome: "violation", code: "INVALID_PATH" });
  const text = await readFile(join(dir, "audit.jsonl"), "utf8");
  expect(text.trim().split("\n")).toEqual(lines);
  const [first, second] = lines.map((l) => JSON.parse(l));
  expect(first).toMatchObject({
    server: "s",
    method: "files/read",
    path: "p/a.txt",
    bytes: 3,
    outcome: "ok",
    consentId: "c1",
  });
  expect(Date.parse(first.time)).not.toBeNaN();
  expect(second.path.length).toBeLessThan(300);
  await cleanup();
});
