// better-sqlite3's constructor, with its compiled addon named directly. Its JavaScript is bundled
// into the CLI (a dozen small CommonJS files that Node would otherwise resolve, read and compile on
// every start, ~5 ms); the addon is loaded from where the package is installed.
import { createRequire } from "node:module";
import Database from "better-sqlite3";

const require = createRequire(import.meta.url);

export const Sqlite: typeof Database = Database;

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
