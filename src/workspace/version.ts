// afs's version, from package.json: its own module, so `afs --version` loads nothing else.
import { createRequire } from "node:module";

export const VERSION: string = (createRequire(import.meta.url)("../../package.json") as { version: string }).version;
