// Property: random sequences of writes, deletes, mkdirs, renames, checkpoints, restores and forks
// leave the workspace exactly like a plain in-memory model of a file tree.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { AfsError } from "../../src/core/errors.js";
import { ancestors, isWithin } from "../../src/core/paths.js";
import type { Volume } from "../../src/volume/volume.js";
import type { Afs } from "../../src/workspace/afs.js";
import { tempAfs } from "../helpers/tmp.js";

const DIR = Symbol("dir");
type Model = Map<string, string | typeof DIR>;

const pathArb = fc
  .array(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 3 })
  .map((segs) => `/${segs.join("/")}`);

type Op =
  | { op: "write"; path: string; content: string }
  | { op: "remove"; path: string }
  | { op: "mkdir"; path: string }
  | { op: "rename"; from: string; to: string; overwrite: boolean }
  | { op: "checkpoint" }
  | { op: "restore"; pick: number }
  | { op: "fork" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ op: fc.constant("write" as const), path: pathArb, content: fc.string({ maxLength: 4 }) }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("remove" as const), path: pathArb }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("mkdir" as const), path: pathArb }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant("rename" as const), from: pathArb, to: pathArb, overwrite: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant("checkpoint" as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("restore" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant("fork" as const) }) },
);

/** Applies an op to the model; returns the error code the real thing must fail with, or null. */
function applyToModel(m: Model, op: Op): string | null {
  const fileAbove = (p: string) => ancestors(p).some((a) => typeof m.get(a) === "string");
  const mkParents = (p: string) => {
    for (const a of ancestors(p)) if (a !== "/") m.set(a, DIR);
  };
  const under = (p: string) => [...m.keys()].filter((k) => isWithin(k, p));
  switch (op.op) {
    case "write":
      if (m.get(op.path) === DIR) return "INVALID_ARGUMENT";
      if (fileAbove(op.path)) return "INVALID_PATH";
      mkParents(op.path);
      m.set(op.path, op.content);
      return null;
    case "mkdir":
      if (m.get(op.path) === DIR) return null;
      if (m.has(op.path)) return "ALREADY_EXISTS";
      if (fileAbove(op.path)) return "INVALID_PATH";
      mkParents(op.path);
      m.set(op.path, DIR);
      return null;
    case "remove":
      if (!m.has(op.path)) return "NOT_FOUND";
      for (const k of under(op.path)) m.delete(k);
      return null;
    case "rename": {
      if (isWithin(op.to, op.from) && op.to !== op.from) return "INVALID_ARGUMENT";
      if (!m.has(op.from)) return "NOT_FOUND";
      if (op.from === op.to) return null;
      if (m.get(op.to) === DIR) return "ALREADY_EXISTS";
      if (m.has(op.to) && !op.overwrite) return "ALREADY_EXISTS";
      if (fileAbove(op.to)) return "INVALID_PATH";
      const moved = under(op.from).map((k) => [k, m.get(k)] as const);
      for (const [k] of moved) m.delete(k);
      mkParents(op.to);
      for (const [k, v] of moved) m.set(op.to + k.slice(op.from.length), v as string | typeof DIR);
      return null;
    }
    default:
      return null;
  }
}

async function snapshotOf(v: Volume): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const s of v.walk("/")) out[s.path] = s.kind === "dir" ? "<dir>" : (await v.readFile(s.path)).toString();
  return out;
}

const render = (m: Model): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v === DIR ? "<dir>" : v]));

let afs: Afs;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ afs, cleanup } = await tempAfs()));
afterAll(() => cleanup());

let run = 0;
it("matches an in-memory model under random operations, checkpoints, restores and forks", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
      let ws = `p${run++}`;
      await afs.workspaces.create(ws);
      let v = await afs.workspaces.volume(ws);
      let model: Model = new Map();
      const saved: { name: string; model: Model }[] = [{ name: "initial", model: new Map() }];
      for (const op of ops) {
        if (op.op === "checkpoint") {
          const { checkpoint } = await afs.checkpoints.create(ws);
          saved.push({ name: checkpoint.name, model: new Map(model) });
        } else if (op.op === "restore") {
          const target = saved[op.pick % saved.length] as (typeof saved)[number];
          await afs.checkpoints.restore(ws, target.name);
          model = new Map(target.model);
        } else if (op.op === "fork") {
          const next = `p${run++}`;
          await afs.workspaces.fork(ws, next);
          ws = next;
          v = await afs.workspaces.volume(ws);
          saved.length = 0;
          const { checkpoint } = await afs.checkpoints.create(ws);
          saved.push({ name: checkpoint.name, model: new Map(model) });
        } else {
          const expected = applyToModel(model, op);
          let actual: string | null = null;
          try {
            if (op.op === "write") await v.writeFile(op.path, Buffer.from(op.content), { op: "write" });
            else if (op.op === "mkdir") await v.mkdir(op.path);
            else if (op.op === "remove") await v.remove(op.path, { recursive: true });
            else await v.rename(op.from, op.to, { overwrite: op.overwrite });
          } catch (e) {
            if (!(e instanceof AfsError)) throw e;
            actual = e.code;
          }
          expect({ op, code: actual }).toEqual({ op, code: expected });
        }
        expect(await snapshotOf(v)).toEqual(render(model));
      }
      expect((await afs.maintenance.fsck()).ok).toBe(true);
    }),
    { numRuns: 150 },
  );
});
