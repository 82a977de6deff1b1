// Diff between two trees: equal subtree hashes are skipped, so the cost follows the differences.
// Identical content that moved is reported once as a rename; text changes carry unified hunks.
import type { Entry } from "../core/entry.js";
import type { Hash } from "../core/hash.js";
import { joinPath } from "../core/paths.js";
import { decodeText } from "../core/text.js";
import { unifiedPatch } from "../core/unified-diff.js";
import type { Store } from "../store/store.js";
import type { TreeReader } from "./tree.js";

export type ChangeStatus = "added" | "modified" | "deleted" | "renamed";

export interface Change {
  status: ChangeStatus;
  path: string;
  old_path?: string;
  kind: Entry["kind"];
  old_sha256?: Hash;
  new_sha256?: Hash;
  /** Unified diff of a modified text file. */
  patch?: string;
  binary?: boolean;
}

export interface DiffSummary {
  added: number;
  modified: number;
  deleted: number;
  renamed: number;
}

/** Files larger than this get no hunks (the change is still reported). */
const MAX_PATCH_BYTES = 1024 * 1024;

export async function diffTrees(store: Store, trees: TreeReader, a: Hash, b: Hash): Promise<Change[]> {
  const changes = await listChanges(trees, a, b);
  await addPatches(store, changes);
  return changes;
}

/** The changes from `a` to `b` sorted by path, without hunks: what a summary or a count needs. */
export async function listChanges(trees: TreeReader, a: Hash | null, b: Hash | null): Promise<Change[]> {
  const changes: Change[] = [];
  await walkPair(trees, "/", a, b, changes);
  pairRenames(changes);
  return changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/**
 * Adds hunks to the text files among `changes` (a page of them, when paging): modified, and added or
 * deleted (against an empty side, as git shows them). A rename pairs identical contents: no hunks.
 */
export async function addPatches(store: Store, changes: readonly Change[]): Promise<void> {
  for (const c of changes) {
    if (c.kind === "file" && c.status !== "renamed") await addPatch(store, c);
  }
}

export function summarize(changes: readonly Change[]): DiffSummary {
  const s: DiffSummary = { added: 0, modified: 0, deleted: 0, renamed: 0 };
  for (const c of changes) s[c.status]++;
  return s;
}

async function walkPair(trees: TreeReader, dir: string, a: Hash | null, b: Hash | null, out: Change[]): Promise<void> {
  if (a === b) return;
  const ta = a ? await trees.get(a) : new Map<string, Entry>();
  const tb = b ? await trees.get(b) : new Map<string, Entry>();
  for (const name of new Set([...ta.keys(), ...tb.keys()])) {
    const ea = ta.get(name);
    const eb = tb.get(name);
    const path = joinPath(dir, name);
    if (ea && eb && ea.kind === eb.kind && ea.hash === eb.hash) continue;
    if (ea?.kind === "dir" || eb?.kind === "dir") {
      // A directory on either side: recurse, treating a non-directory on the other side as
      // deleted/added on its own.
      await walkPair(trees, path, ea?.kind === "dir" ? ea.hash : null, eb?.kind === "dir" ? eb.hash : null, out);
      if (ea && ea.kind !== "dir") out.push({ status: "deleted", path, kind: ea.kind, old_sha256: ea.hash });
      if (eb && eb.kind !== "dir") out.push({ status: "added", path, kind: eb.kind, new_sha256: eb.hash });
      continue;
    }
    if (ea && eb) {
      out.push({ status: "modified", path, kind: eb.kind, old_sha256: ea.hash, new_sha256: eb.hash });
    } else if (ea) {
      out.push({ status: "deleted", path, kind: ea.kind, old_sha256: ea.hash });
    } else if (eb) {
      out.push({ status: "added", path, kind: eb.kind, new_sha256: eb.hash });
    }
  }
}

/** Turns a deleted + added pair with the same content into one rename. */
function pairRenames(changes: Change[]): void {
  const deleted = new Map<Hash, Change[]>();
  for (const c of changes) {
    if (c.status === "deleted" && c.old_sha256) {
      const list = deleted.get(c.old_sha256) ?? [];
      list.push(c);
      deleted.set(c.old_sha256, list);
    }
  }
  const consumed = new Set<Change>();
  for (const c of changes) {
    if (c.status !== "added" || !c.new_sha256) continue;
    const from = deleted.get(c.new_sha256)?.find((d) => !consumed.has(d) && d.kind === c.kind);
    if (!from) continue;
    consumed.add(from);
    c.status = "renamed";
    c.old_path = from.path;
    c.old_sha256 = from.old_sha256;
  }
  for (let i = changes.length - 1; i >= 0; i--) if (consumed.has(changes[i] as Change)) changes.splice(i, 1);
}

async function addPatch(store: Store, c: Change): Promise<void> {
  // The side a change lacks (added: before; deleted: after) is shown as /dev/null, as git does.
  const sides = [c.old_sha256, c.new_sha256];
  // Sizes first: a large content is never read whole just to find it is too big to patch.
  const sizes = await Promise.all(sides.map((h) => (h ? store.blobSize(h) : 0)));
  if (sizes.some((n) => n === null || n > MAX_PATCH_BYTES)) return;
  const [a, b] = await Promise.all(sides.map((h) => (h ? store.getBlob(h) : null)));
  if ((c.old_sha256 && !a) || (c.new_sha256 && !b)) return;
  if ([a, b].some((x) => x && x.length > MAX_PATCH_BYTES)) return;
  const ta = a ? decodeText(a) : null;
  const tb = b ? decodeText(b) : null;
  if ((a && ta === null) || (b && tb === null)) {
    c.binary = true;
    return;
  }
  c.patch = unifiedPatch(c.path, ta, tb);
}
