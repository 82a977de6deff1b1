// A mount in a process of its own, for fault tests: mounts argv's workspace in argv's directory
// with argv's home and store, prints "ready" once in step, and syncs until killed.
import { Mount } from "../../src/mounts/mount.js";
import { Afs } from "../../src/workspace/afs.js";

const [home, store, workspace, dir] = process.argv.slice(2) as [string, string, string, string];
const afs = await Afs.open({ home, store, actor: "killed" });
await Mount.start(afs, { workspace, dir, host: "h" });
process.stdout.write("ready\n");
setInterval(() => {}, 1 << 30);
