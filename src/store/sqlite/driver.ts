// better-sqlite3's constructor, loaded with require(): an ES `import` of a CommonJS module makes
// Node run its export lexer first (~13 ms of every afs process's start-up). Types still come from
// `import type Database from "better-sqlite3"`.
import { createRequire } from "node:module";
import type Database from "better-sqlite3";

const require = createRequire(import.meta.url);

export const Sqlite = require("better-sqlite3") as typeof Database;

/**
 * The compiled addon, named directly: better-sqlite3's own lookup (the `bindings` package) probes a
 * dozen paths on every start (~4 ms of a short command). Undefined, so its lookup runs, when the
 * addon was built somewhere else.
 */
const NATIVE_BINDING = ((): string | undefined => {
  try {
    return require.resolve("better-sqlite3/build/Release/better_sqlite3.node");
  } catch {
    return undefined;
  }
})();

/** Opens a database file with the addon found once. */
export function openDatabase(file: string, options: Database.Options = {}): Database.Database {
  return new Sqlite(file, NATIVE_BINDING ? { nativeBinding: NATIVE_BINDING, ...options } : options);
}
