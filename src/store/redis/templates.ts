// Template marks in Redis: slug → workspace and workspace → slug, two hashes under one hash tag, so
// one script checks a slug is free and writes both. Marks live apart from the workspaces they name
// (another slot): readers skip a mark whose workspace is gone, as with the other global indexes.
import { AfsError } from "../../core/errors.js";
import type { TemplateRecord } from "../store.js";
import { arr, batched, fields, type RedisLink, str } from "./client.js";
import type { Keys } from "./keys.js";
import { SET_TEMPLATE, UNMARK_TEMPLATE } from "./scripts.js";

export class RedisTemplates {
  constructor(
    private readonly link: RedisLink,
    private readonly keys: Keys,
  ) {}

  async set(workspace: string, slug: string | null): Promise<void> {
    // Checked before the script, which cannot see the workspace's slot: a delete racing past this
    // leaves a mark on a missing workspace, which readers skip and a create of the name drops.
    if (!(await this.exists(workspace))) {
      throw new AfsError("NOT_FOUND", `workspace ${JSON.stringify(workspace)} does not exist`, { workspace });
    }
    if (slug === null) return this.unmark(workspace);
    const holder = str(await this.link.read(["HGET", this.keys.templates, slug]));
    const stale = holder !== null && holder !== workspace && !(await this.exists(holder)) ? holder : "";
    const [status, taken] = arr(await this.link.run(SET_TEMPLATE, this.all, [workspace, slug, stale]));
    if (str(status ?? null) === "TAKEN") {
      const owner = str(taken ?? null);
      throw new AfsError("ALREADY_EXISTS", `template slug ${slug} belongs to workspace ${owner}`, {
        slug,
        workspace: owner,
      });
    }
  }

  async list(): Promise<TemplateRecord[]> {
    const marks = [...fields(await this.link.read(["HGETALL", this.keys.templates]))].map(([slug, workspace]) => ({
      slug,
      workspace,
    }));
    const live = await batched(marks, (t) => this.exists(t.workspace));
    // Bytewise, like SQLite's ORDER BY slug.
    return marks.filter((_, i) => live[i]).sort((a, b) => Buffer.compare(Buffer.from(a.slug), Buffer.from(b.slug)));
  }

  /** Drops a workspace's mark, if any. Only deletes, so it runs when Redis is out of memory too. */
  async unmark(workspace: string): Promise<void> {
    await this.link.run(UNMARK_TEMPLATE, this.all, [workspace]);
  }

  /**
   * A workspace just created has no mark; one found was left by a crash between a delete and its
   * mark's removal, and would otherwise come back with the name.
   */
  async dropLeftover(workspace: string): Promise<void> {
    if (str(await this.link.read(["HGET", this.keys.templateMarks, workspace])) !== null) await this.unmark(workspace);
  }

  private get all(): string[] {
    return [this.keys.templates, this.keys.templateMarks];
  }

  private async exists(workspace: string): Promise<boolean> {
    return (await this.link.read(["EXISTS", this.keys.ws(workspace, "meta")])) === 1;
  }
}
