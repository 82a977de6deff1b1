// A process writing a tree's map of contents to paths, for the fault test: writes argv's workspace's
// head tree map two files per transaction, prints "written" once a batch is committed, then waits
// mid-map (asked for the next file) until killed.

import type { Hash } from "../../src/core/hash.js";
import { Afs } from "../../src/workspace/afs.js";
import { internalsOf } from "../../src/workspace/engine/internals.js";
import { TreeReader } from "../../src/workspace/tree.js";

const [home, store, workspace] = process.argv.slice(2) as [string, string, string];
const afs = await Afs.open({ home, store, actor: "killed" });
const volume = await afs.workspaces.volume(workspace);
const tree = (await volume.storedBase?.("/"))?.tree as Hash;
const reader = new TreeReader(internalsOf(afs).store);

async function* files(): AsyncGenerator<{ path: string; hash: Hash }> {
  let given = 0;
  const stack: { tree: Hash; prefix: string }[] = [{ tree, prefix: "" }];
  while (stack.length > 0) {
    const { tree: t, prefix } = stack.pop() as { tree: Hash; prefix: string };
    for (const [name, e] of await reader.get(t)) {
      if (e.kind === "dir") stack.push({ tree: e.hash, prefix: `${prefix}${name}/` });
      else if (e.kind === "file") {
        // Asked for a third file: the first two are committed.
        if (++given === 3) {
          process.stdout.write("written\n");
          await new Promise(() => setInterval(() => {}, 1 << 30));
        }
        yield { path: prefix + name, hash: e.hash };
      }
    }
  }
}

await afs.indexes.text.writeTreeMap(tree, files(), 2);
process.stdout.write("finished\n");
