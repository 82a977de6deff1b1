// The store and search file behind an open engine, for tests and benchmarks that inspect what the
// engine wrote (objects, index rows). Not part of the library's surface; src/ never uses it.
import type { IndexDb } from "../../store/index-db.js";
import type { Store } from "../../store/store.js";
import type { Engine } from "./engine.js";

const engines = new WeakMap<object, Engine>();

export const registerEngine = (facade: object, engine: Engine): void => {
  engines.set(facade, engine);
};

export function internalsOf(facade: object): { store: Store; searchDb: IndexDb } {
  const engine = engines.get(facade);
  if (!engine) throw new Error("not an open Afs");
  return { store: engine.store, searchDb: engine.search.db };
}
