// The operations' contract on the versioned workspace Volume (a real SQLite file).
import { indexesOf } from "../helpers/search-indexes.js";
import { tempAfs } from "../helpers/tmp.js";
import { opsContract } from "./ops-contract.js";

opsContract("WorkspaceVolume", async () => {
  const { afs, cleanup } = await tempAfs();
  await afs.workspaces.create("contract");
  return { volume: await afs.workspaces.volume("contract"), ...indexesOf(afs), cleanup };
});
