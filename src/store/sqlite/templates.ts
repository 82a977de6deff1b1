// The template table of the SQLite store: which workspaces are offered as templates, under which
// slug. A row goes with its workspace (ON DELETE CASCADE); slugs and workspaces are each unique.
import type Database from "better-sqlite3";
import { AfsError } from "../../core/errors.js";
import type { TemplateRecord } from "../store.js";

/** Schema version 4. */
export const TEMPLATES_MIGRATION = `
  CREATE TABLE templates (
    slug TEXT PRIMARY KEY,
    workspace TEXT NOT NULL UNIQUE REFERENCES workspaces(name) ON DELETE CASCADE
  );
`;

/** Synchronous template operations on one connection; the store wraps them in a transaction and its guard. */
export function templateStatements(db: Database.Database) {
  const holder = db.prepare<[string], string>("SELECT workspace FROM templates WHERE slug = ?").pluck();
  const exists = db.prepare<[string], number>("SELECT 1 FROM workspaces WHERE name = ?").pluck();
  const drop = db.prepare<[string]>("DELETE FROM templates WHERE workspace = ?");
  const insert = db.prepare<[string, string]>("INSERT INTO templates (slug, workspace) VALUES (?, ?)");
  const all = db.prepare<[], TemplateRecord>("SELECT slug, workspace FROM templates ORDER BY slug");
  return {
    set(workspace: string, slug: string | null): void {
      if (exists.get(workspace) === undefined) {
        throw new AfsError("NOT_FOUND", `workspace ${JSON.stringify(workspace)} does not exist`, { workspace });
      }
      const taken = slug === null ? undefined : holder.get(slug);
      if (taken !== undefined && taken !== workspace) {
        throw new AfsError("ALREADY_EXISTS", `template slug ${slug} belongs to workspace ${taken}`, {
          slug,
          workspace: taken,
        });
      }
      drop.run(workspace);
      if (slug !== null) insert.run(slug, workspace);
    },
    list: (): TemplateRecord[] => all.all(),
  };
}
