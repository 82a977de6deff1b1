// The content index's posting lists in the index file, in segments: each indexing transaction
// writes its batch's lists (search/postings.ts) as one segment, a row per key keyed
// seg * KEY_SPAN + key, so a segment is written in key order at the end of the table and read by
// point lookups. A query reads a key's list from each segment. Segments of a level are merged into
// one of the next level once FANIN of them are there, by joining their lists' bytes, so there are
// never many. (FTS5 did this before, at ~80% of the builder's writing thread for a million files:
// tokenizing documents of trigram names, and merging its own segments.)

import type Database from "better-sqlite3";
import { type EncodedPostings, evaluate, joinLists, type PostingQuery, rebase } from "../../search/postings.js";
import { POSTING_KEYS } from "../../search/trigram-token.js";

/** The key space of one segment's rows: a power of two above POSTING_KEYS. */
const KEY_SPAN = 1 << 22;
/** Segments of one level that are merged into one of the next. */
const FANIN = 8;
/**
 * Segments whose lists add up to more than this are not merged: a merge rewrites every byte once
 * more, and a tree of a million small texts then keeps ~35 segments of ~17 MB, which a query reads
 * with as many lookups per key.
 */
const MAX_MERGE_BYTES = 128 * 1024 * 1024;
/** Keys merged at a time: a merge holds the lists of this slice of the key space of each segment. */
const MERGE_KEYS = 1 << 14;

export const POSTINGS_SCHEMA = `
  CREATE TABLE text_segments (
    seg INTEGER PRIMARY KEY,
    level INTEGER NOT NULL,
    first INTEGER NOT NULL,
    bytes INTEGER NOT NULL
  );
  CREATE TABLE text_postings (key INTEGER PRIMARY KEY, ids BLOB NOT NULL);
  INSERT INTO text_meta (key, value) VALUES ('next_id', 1);`;

interface Segment {
  seg: number;
  first: number;
  bytes: number;
}

export class SqlitePostings {
  private readonly st;
  private scratch = new Uint8Array(64 * 1024);

  constructor(private readonly db: Database.Database) {
    this.st = {
      nextId: db.prepare("SELECT value FROM text_meta WHERE key = 'next_id'").pluck(),
      setNextId: db.prepare<[number]>("UPDATE text_meta SET value = ? WHERE key = 'next_id'"),
      segments: db.prepare("SELECT seg FROM text_segments ORDER BY first").pluck(),
      level: db.prepare<[number]>("SELECT seg, first, bytes FROM text_segments WHERE level = ? ORDER BY first"),
      newSegment: db.prepare<[number, number, number]>(
        "INSERT INTO text_segments (level, first, bytes) VALUES (?, ?, ?)",
      ),
      insert: db.prepare<[number, Uint8Array]>("INSERT INTO text_postings (key, ids) VALUES (?, ?)"),
      lists: db
        .prepare<[string]>("SELECT key, ids FROM text_postings WHERE key IN (SELECT value FROM json_each(?))")
        .raw(),
      // length() of a blob reads its row's header, not the blob.
      bytes: db
        .prepare<[string]>(
          "SELECT coalesce(sum(length(ids)), 0) FROM text_postings WHERE key IN (SELECT value FROM json_each(?))",
        )
        .pluck(),
      range: db.prepare<[number, number]>("SELECT key, ids FROM text_postings WHERE key >= ? AND key < ?").raw(),
      dropRows: db.prepare<[number, number]>("DELETE FROM text_postings WHERE key >= ? AND key < ?"),
      dropSegment: db.prepare<[number]>("DELETE FROM text_segments WHERE seg = ?"),
    };
  }

  /**
   * Reserves `count` row ids, in the writer's transaction: the first of them. Ids are never handed
   * out twice (not after a prune either), so a list naming a row that is gone names no other.
   */
  reserve(count: number): number {
    const first = this.st.nextId.get() as number;
    this.st.setNextId.run(first + count);
    return first;
  }

  /** Writes a batch's lists as a segment, its ids from `base` (see PostingsBuilder); in the writer's transaction. */
  write(base: number, postings: EncodedPostings): void {
    const { keys, ends, bytes } = postings;
    if (keys.length === 0) return;
    const seg = Number(this.st.newSegment.run(0, base + postings.first, bytes.length).lastInsertRowid);
    let from = 0;
    for (let j = 0; j < keys.length; j++) {
      const to = ends[j] as number;
      // Bound values are copied by SQLite: one scratch buffer serves every list.
      const list = rebase(bytes.subarray(from, to), base, this.scratch);
      if (list.buffer !== this.scratch.buffer && list.length > this.scratch.length)
        this.scratch = new Uint8Array(list.length * 2);
      this.st.insert.run(seg * KEY_SPAN + (keys[j] as number), list);
      from = to;
    }
    this.mergeFull();
  }

  /**
   * The ids of the rows a query may match (a superset, ascending). In one read transaction (the
   * caller's, or its own): a merge committed between reading the segments and their lists would
   * leave out the texts of the segments it merged.
   */
  match(query: PostingQuery): Float64Array {
    return this.db.transaction(() => this.matchNow(query)).deferred();
  }

  private matchNow(query: PostingQuery): Float64Array {
    const segments = this.st.segments.all() as number[];
    if (segments.length === 0) return new Float64Array(0);
    const place = new Map(segments.map((s, i) => [s, i]));
    const keysOf = (key: number) => JSON.stringify(segments.map((s) => s * KEY_SPAN + key));
    return evaluate(query, {
      bytes: (key) => this.st.bytes.get(keysOf(key)) as number,
      lists: (key) => {
        const rows = this.st.lists.all(keysOf(key)) as [number, Buffer][];
        // In the order of the segments' first ids (decodeLists then needs no sort), which IN does not keep.
        const at = (row: [number, Buffer]) => place.get(Math.floor(row[0] / KEY_SPAN)) ?? 0;
        if (rows.length > 1) rows.sort((a, b) => at(a) - at(b));
        return rows.map((r) => r[1]);
      },
    });
  }

  clear(): void {
    this.db.exec("DELETE FROM text_postings; DELETE FROM text_segments");
  }

  /** Merges each level that holds FANIN segments (and not too many bytes) into one of the next. */
  private mergeFull(): void {
    for (let level = 0; ; level++) {
      const segments = this.st.level.all(level) as Segment[];
      if (segments.length < FANIN) return;
      const bytes = segments.reduce((n, s) => n + s.bytes, 0);
      if (bytes > MAX_MERGE_BYTES) return;
      this.merge(segments, level + 1, bytes);
    }
  }

  /** One segment of `level` holding the lists of `segments` (in the order of their first ids), which go. */
  private merge(segments: readonly Segment[], level: number, bytes: number): void {
    const first = segments[0] as Segment;
    const seg = Number(this.st.newSegment.run(level, first.first, bytes).lastInsertRowid);
    for (let from = 0; from < POSTING_KEYS; from += MERGE_KEYS) {
      const lists = new Map<number, Uint8Array[]>();
      for (const s of segments) {
        for (const [key, ids] of this.st.range.all(s.seg * KEY_SPAN + from, s.seg * KEY_SPAN + from + MERGE_KEYS) as [
          number,
          Buffer,
        ][]) {
          const k = key - s.seg * KEY_SPAN;
          const had = lists.get(k);
          if (had) had.push(ids);
          else lists.set(k, [ids]);
        }
      }
      for (const k of [...lists.keys()].sort((a, b) => a - b)) {
        this.st.insert.run(seg * KEY_SPAN + k, joinLists(lists.get(k) as Uint8Array[]));
      }
    }
    for (const s of segments) {
      this.st.dropRows.run(s.seg * KEY_SPAN, (s.seg + 1) * KEY_SPAN);
      this.st.dropSegment.run(s.seg);
    }
  }
}
