// `afs migrate`: copies workspaces with their whole history (checkpoints, live overlay, event log),
// the objects they reach and the tokens from one Store to another, then checks the target like
// `afs fsck`. The source is only read; the target gets each workspace in one atomic import.
import { createHash } from "node:crypto";
import { AfsError } from "../core/errors.js";
import type { Hash } from "../core/hash.js";
import { RETRY, retryOnConflict, spentText } from "../core/retry.js";
import type { Store, WorkspaceDump } from "../store/store.js";
import type { TokenRecord } from "../store/tokens.js";
import { checkStore, type FsckResult } from "./gc.js";
import { EMPTY_TREE, EMPTY_TREE_DATA, TreeReader } from "./tree.js";
import { VERSIONING_SETTING } from "./versioning.js";

export interface MigrateOptions {
  /** Only these workspaces (and the tokens pinned to them, plus control-plane tokens); all by default. */
  workspaces?: readonly string[];
  /** Bytes of object content copied so far, of the total to copy. */
  onProgress?: (done: number, total: number) => void;
}

export interface MigrateResult {
  workspaces: string[];
  checkpoints: number;
  events: number;
  /** Workspaces offered as templates, still offered under the same slug. */
  templates: number;
  /** Trees reached and written (writing one the target has changes nothing). */
  trees: number;
  blobs_copied: number;
  /** Objects the target already held (content addressing makes them the same). */
  objects_present: number;
  bytes_copied: number;
  tokens_copied: number;
  tokens_present: number;
  /** The target checked as `afs fsck` would after the copy. */
  fsck: FsckResult;
}

const BATCH = 256;

export async function migrate(source: Store, target: Store, options: MigrateOptions = {}): Promise<MigrateResult> {
  const names = await chooseWorkspaces(source, options.workspaces);
  for (const name of names) {
    if (await target.getWorkspace(name)) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `the target store already has a workspace named ${name}; delete it there, or migrate the others with --workspace`,
        { workspace: name },
      );
    }
  }
  const dumps: WorkspaceDump[] = [];
  for (const name of names) dumps.push(await dumpWorkspace(source, name));
  const tokens = (await source.listTokens()).filter((t) => t.workspace === null || names.includes(t.workspace));
  const missingTokens = await tokensToCopy(target, tokens);
  const templates = (await source.listTemplates()).filter((t) => names.includes(t.workspace));
  const taken = new Map((await target.listTemplates()).map((t) => [t.slug, t.workspace]));
  for (const t of templates) {
    if (taken.has(t.slug)) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `the target store already offers template ${t.slug} (workspace ${taken.get(t.slug)}); unmark it there first`,
        { template: t.slug },
      );
    }
  }

  const objects = await copyObjects(source, target, dumps, options.onProgress);
  for (const dump of dumps) {
    await target.importWorkspace(dump);
    // The versioning policy goes with the workspace, so the target's gc keeps what the source's did.
    const policy = await source.getWorkspaceSetting(dump.workspace.name, VERSIONING_SETTING);
    if (policy !== null) await target.setWorkspaceSetting(dump.workspace.name, VERSIONING_SETTING, policy);
  }
  for (const t of templates) await target.setTemplate(t.workspace, t.slug);
  // Oldest first, so tokens created in the same millisecond list in the same order there.
  for (const token of [...missingTokens].reverse()) await target.putToken(token);
  return {
    workspaces: names,
    checkpoints: dumps.reduce((n, d) => n + d.checkpoints.length, 0),
    events: dumps.reduce((n, d) => n + d.events.length, 0),
    templates: templates.length,
    ...objects,
    tokens_copied: missingTokens.length,
    tokens_present: tokens.length - missingTokens.length,
    fsck: await checkStore(target, new TreeReader(target)),
  };
}

async function chooseWorkspaces(source: Store, wanted: readonly string[] | undefined): Promise<string[]> {
  const all = (await source.listWorkspaces()).map((w) => w.name);
  if (!wanted || wanted.length === 0) return all;
  const missing = wanted.filter((name) => !all.includes(name));
  if (missing.length > 0) {
    throw new AfsError("NOT_FOUND", `the source store has no workspace ${missing.join(", ")}`, { workspaces: missing });
  }
  return [...new Set(wanted)];
}

/** A consistent dump: read again (under the one retry policy) when a commit landed between reading the record and the log. */
function dumpWorkspace(source: Store, name: string): Promise<WorkspaceDump> {
  return retryOnConflict(
    async () => {
      const before = await source.getWorkspace(name);
      if (!before)
        throw new AfsError("NOT_FOUND", `workspace ${name} was deleted from the source during the migration`);
      const checkpoints = await source.listCheckpoints(name);
      const overlay = await source.overlayUnder(name, "/");
      const events = [];
      for (let after = 0; ; ) {
        const page = await source.listEvents(name, after, 10_000);
        events.push(...page);
        if (page.length < 10_000) break;
        after = page[page.length - 1]?.seq ?? after;
      }
      const now = await source.getWorkspace(name);
      const still = now?.revision === before.revision && now.head === before.head;
      return still ? { workspace: before, checkpoints, overlay, events } : RETRY;
    },
    {
      giveUp: (spent) =>
        new AfsError(
          "CONFLICT",
          `workspace ${name} kept changing while it was read (${spentText(spent)}); stop the processes writing to the source and migrate again`,
          { workspace: name },
        ),
    },
  );
}

/**
 * The tokens the target lacks. One it holds under the same id must be the same token, or nothing
 * is copied.
 */
async function tokensToCopy(target: Store, tokens: readonly TokenRecord[]): Promise<TokenRecord[]> {
  const missing: TokenRecord[] = [];
  for (const token of tokens) {
    const there = await target.getToken(token.id);
    if (!there) missing.push(token);
    else if (!sameToken(there, token)) {
      throw new AfsError(
        "CONFLICT",
        `the target store has a different token with id ${token.id}; revoke or remove it there first`,
        { token: token.id },
      );
    }
  }
  return missing;
}

/** Field by field: two stores may return a record's keys in different orders. */
const sameToken = (a: TokenRecord, b: TokenRecord): boolean =>
  (Object.keys(b) as (keyof TokenRecord)[]).every((k) => a[k] === b[k]) &&
  Object.keys(a).length === Object.keys(b).length;

/** Copies every tree and blob the dumps reach that the target lacks, checking each blob's hash. */
async function copyObjects(
  source: Store,
  target: Store,
  dumps: readonly WorkspaceDump[],
  onProgress: MigrateOptions["onProgress"],
): Promise<Pick<MigrateResult, "trees" | "blobs_copied" | "objects_present" | "bytes_copied">> {
  const trees = new TreeReader(source);
  const treeHashes = new Set<Hash>();
  const blobHashes = new Set<Hash>();
  const stack: Hash[] = [];
  for (const dump of dumps) {
    for (const cp of dump.checkpoints) stack.push(cp.root);
    for (const row of dump.overlay) {
      if (row.entry?.kind === "dir") stack.push(row.entry.hash);
      else if (row.entry) blobHashes.add(row.entry.hash);
    }
  }
  // Old versions the events name stay readable on the target, as many as the source still holds.
  const versions = new Set<Hash>();
  for (const dump of dumps) {
    for (const e of dump.events) {
      if (e.op === "checkpoint" || e.op === "restore") continue;
      if (e.oldHash) versions.add(e.oldHash);
      if (e.newHash) versions.add(e.newHash);
    }
  }
  const named = [...versions];
  for (let i = 0; i < named.length; i += BATCH) {
    for (const h of await source.hasBlobs(named.slice(i, i + BATCH))) blobHashes.add(h);
  }
  while (stack.length > 0) {
    const hash = stack.pop() as Hash;
    if (treeHashes.has(hash)) continue;
    treeHashes.add(hash);
    for (const entry of (await trees.get(hash)).values()) {
      if (entry.kind === "dir") stack.push(entry.hash);
      else blobHashes.add(entry.hash);
    }
  }

  const blobs = [...blobHashes];
  const missing: Hash[] = [];
  for (let i = 0; i < blobs.length; i += BATCH) {
    const batch = blobs.slice(i, i + BATCH);
    const present = await target.hasBlobs(batch);
    for (const h of batch) if (!present.has(h)) missing.push(h);
  }
  const sizes = new Map<Hash, number>();
  for (const h of missing) {
    const size = await source.blobSize(h);
    if (size === null) throw new AfsError("IO_ERROR", `blob ${h} is missing from the source store; run afs fsck there`);
    sizes.set(h, size);
  }
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);
  let done = 0;
  onProgress?.(0, total);

  // Trees before blobs would do as well: nothing references them until the workspaces are imported.
  const treeList = [...treeHashes];
  for (let i = 0; i < treeList.length; i += BATCH) {
    const batch = [];
    for (const hash of treeList.slice(i, i + BATCH)) {
      // Every store holds the empty tree implicitly (Afs.open writes it), so it is copied from here.
      const data = hash === EMPTY_TREE ? EMPTY_TREE_DATA : await source.getTree(hash);
      if (!data) throw new AfsError("IO_ERROR", `tree ${hash} is missing from the source store; run afs fsck there`);
      batch.push({ hash, data });
    }
    await target.putTrees(batch);
  }

  let small: { hash: Hash; data: Buffer }[] = [];
  let smallBytes = 0;
  const flush = async (): Promise<void> => {
    await target.putBlobs(small);
    small = [];
    smallBytes = 0;
  };
  for (const hash of missing) {
    const size = sizes.get(hash) as number;
    if (size <= target.chunkBytes) {
      const data = await source.getBlob(hash);
      if (!data || createHash("sha256").update(data).digest("hex") !== hash) throw damaged(hash);
      small.push({ hash, data });
      smallBytes += size;
      if (small.length >= BATCH || smallBytes >= target.chunkBytes) await flush();
    } else {
      const stored = await target.putBlobStream(source.blobStream(hash));
      if (stored.hash !== hash) throw damaged(hash);
    }
    done += size;
    onProgress?.(done, total);
  }
  await flush();
  return {
    trees: treeList.length,
    blobs_copied: missing.length,
    objects_present: blobs.length - missing.length,
    bytes_copied: total,
  };
}

const damaged = (hash: Hash): AfsError =>
  new AfsError("IO_ERROR", `blob ${hash} in the source store does not match its hash; run afs fsck there`, {
    blob: hash,
  });
