// better-sqlite3's constructor, loaded with require(): an ES `import` of a CommonJS module makes
// Node run its export lexer first (~13 ms of every afs process's start-up). Types still come from
// `import type Database from "better-sqlite3"`.
import { createRequire } from "node:module";
import type Database from "better-sqlite3";

export const Sqlite = createRequire(import.meta.url)("better-sqlite3") as typeof Database;
