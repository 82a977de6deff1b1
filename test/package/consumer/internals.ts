// Only the entry points are importable: an internal module must stay out of reach of a consumer
// (package.json `exports`). If it became reachable, the directive below would be unused: an error.
// @ts-expect-error not exported by the package
import type { Afs } from "afs/dist/workspace/afs.js";

export type Hidden = Afs;
