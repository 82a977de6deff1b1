// Merkle trees: a directory is the canonical encoding of its sorted entries, named by its hash.
// Trees are immutable, so decoded trees are cached by hash without any invalidation.
import type { Entry, EntryKind, NamedEntry } from "../core/entry.js";
import { AfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import { WeightedLru } from "../core/lru.js";
import type { Store } from "../store/store.js";

export type TreeEntries = ReadonlyMap<string, Entry>;

const KIND_CODE: Record<EntryKind, string> = { file: "f", dir: "d", symlink: "l" };
const CODE_KIND: Record<string, EntryKind> = { f: "file", d: "dir", l: "symlink" };

type EncodedEntry = [name: string, kind: string, hash: Hash, size: number, mode: number, mtime: number];

/** Canonical bytes of a tree: entries sorted by name, one compact JSON array. */
export function encodeTree(entries: TreeEntries): Buffer {
  const names = [...entries.keys()].sort();
  const rows: EncodedEntry[] = names.map((name) => {
    const e = entries.get(name) as Entry;
    return [name, KIND_CODE[e.kind], e.hash, e.size, e.mode, e.mtime];
  });
  return Buffer.from(JSON.stringify(rows));
}

export function decodeTree(data: Uint8Array, hash: Hash): Map<string, Entry> {
  let rows: EncodedEntry[];
  try {
    // Decoded in place, not copied first: a cold listing decodes every tree of a workspace.
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    rows = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new AfsError("IO_ERROR", `tree ${hash} is corrupt; run afs fsck`);
  }
  const out = new Map<string, Entry>();
  // Indexed, not destructured: a new process runs this unoptimized, where destructuring is slow.
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i] as EncodedEntry;
    const kind = CODE_KIND[row[1]];
    if (!kind) throw new AfsError("IO_ERROR", `tree ${hash} has an unknown entry kind; run afs fsck`);
    out.set(row[0], { kind, hash: row[2], size: row[3], mode: row[4], mtime: row[5] });
  }
  return out;
}

export const EMPTY_TREE_DATA = encodeTree(new Map());
export const EMPTY_TREE: Hash = sha256(EMPTY_TREE_DATA);

/** Reads trees through a bounded cache and collects new trees for one batched write. */
export class TreeReader {
  private readonly cache: WeightedLru<Hash, Map<string, Entry>>;

  /** `capacity` counts entries across the cached trees, so a few huge directories cannot crowd out memory. */
  constructor(
    private readonly store: Store,
    capacity = 500_000,
  ) {
    this.cache = new WeightedLru(capacity, (tree) => tree.size + 1);
  }

  /**
   * The tree `hash`, decoded. `keep: false` leaves it out of the cache when it is not there already:
   * a streamed walk reads each tree once, and caching a million files' trees would hold them all.
   */
  async get(hash: Hash, { keep = true }: { keep?: boolean } = {}): Promise<Map<string, Entry>> {
    const hit = this.cache.get(hash);
    if (hit) return hit;
    if (hash === EMPTY_TREE) return this.remember(hash, new Map());
    const data = await this.store.getTree(hash);
    if (!data) throw new AfsError("IO_ERROR", `tree ${hash} is missing from the store; run afs fsck`);
    const tree = decodeTree(data, hash);
    return keep ? this.remember(hash, tree) : tree;
  }

  /** Follows `segments` down from the tree `root`; null when a step is missing or not a directory. */
  async lookup(root: Hash, segments: readonly string[]): Promise<Entry | null> {
    let dir = root;
    let entry: Entry | null = null;
    for (let i = 0; i < segments.length; i++) {
      const tree = await this.get(dir);
      entry = tree.get(segments[i] as string) ?? null;
      if (!entry) return null;
      if (i < segments.length - 1) {
        if (entry.kind !== "dir") return null;
        dir = entry.hash;
      }
    }
    return entry;
  }

  private remember(hash: Hash, tree: Map<string, Entry>): Map<string, Entry> {
    this.cache.set(hash, tree);
    return tree;
  }
}

/** New trees built during one operation, written to the store in a single batch. */
export class TreeWriter {
  readonly pending = new Map<Hash, Buffer>();

  add(entries: TreeEntries): Hash {
    const data = encodeTree(entries);
    const hash = sha256(data);
    this.pending.set(hash, data);
    return hash;
  }

  async flush(store: Store): Promise<void> {
    if (this.pending.size === 0) return;
    await store.putTrees([...this.pending].map(([hash, data]) => ({ hash, data })));
    this.pending.clear();
  }
}

export const sortedEntries = (tree: TreeEntries): NamedEntry[] =>
  [...tree.keys()].sort().map((name) => ({ name, ...(tree.get(name) as Entry) }));
