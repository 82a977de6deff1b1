// A query index that lives for one query, for volumes without a persistent one (a plain directory):
// files are read and split into passages on the spot and ranked by BM25 in memory, with statistics
// over the files in scope. Keyword only: semantic search needs a workspace's stored vectors.
import { isAfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import { bm25Rank } from "./bm25.js";
import { filePassages, MAX_FILE_BYTES, type PassageStrategy, passageDocument } from "./passages.js";
import type { Embedder, IndexedFile, KeywordHit, QueryIndex, ScopeFile, VectorHit } from "./query-index.js";
import { type KeywordQuery, tokenize } from "./words.js";

/** Where a scan reads files: a Volume will do (only these two of its members are used). */
export interface ScannedFiles {
  /** Names the files in messages: "directory /srv/data". */
  readonly label: string;
  /** A file's bytes; NOT_FOUND or INVALID_ARGUMENT when it vanished or became a directory. */
  readFile(path: string): Promise<Buffer>;
}

interface ScannedPassage {
  blob: Hash;
  seq: number;
  start_line: number;
  end_line: number;
  hash: Hash;
  tokens: string[];
}

export class ScanIndex implements QueryIndex {
  private readonly blobs = new Map<Hash, { text: string | null; passages: ScannedPassage[] }>();

  constructor(private readonly files: ScannedFiles) {}

  async prepare(files: readonly ScopeFile[], strategy: PassageStrategy): Promise<IndexedFile[]> {
    const out: IndexedFile[] = [];
    for (const f of files) {
      if (f.size > MAX_FILE_BYTES) continue;
      const data = await this.read(f.path);
      if (!data) continue;
      const hash = f.hash ?? sha256(data);
      if (!this.blobs.has(hash)) {
        const passages = filePassages(data, f.path, strategy).passages.map((c) => ({
          blob: hash,
          seq: c.seq,
          start_line: c.start_line,
          end_line: c.end_line,
          hash: "",
          tokens: tokenize(passageDocument(c)),
        }));
        this.blobs.set(hash, { text: decodeText(data), passages });
      }
      out.push({ path: f.path, hash });
    }
    return out;
  }

  async keyword(
    query: KeywordQuery,
    _strategy: PassageStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<KeywordHit[]> {
    const docs = [...scope].flatMap((h) => this.blobs.get(h)?.passages ?? []);
    return bm25Rank(docs, query)
      .slice(0, limit)
      .map(({ doc: { tokens: _, ...passage }, score }) => ({ passage, score }));
  }

  async embedder(): Promise<Embedder> {
    return {
      provider: null,
      message: `semantic search needs an afs workspace (its vectors are stored); ${this.files.label} is searched by keyword only`,
    };
  }

  async embed(): Promise<{ missing: number }> {
    return { missing: 0 };
  }

  async nearest(): Promise<VectorHit[]> {
    return [];
  }

  async text(file: IndexedFile): Promise<string | null> {
    return this.blobs.get(file.hash)?.text ?? null;
  }

  /** A file's bytes, or null when it vanished or became a directory since the walk. */
  private async read(path: string): Promise<Buffer | null> {
    try {
      return await this.files.readFile(path);
    } catch (e) {
      if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return null;
      throw e;
    }
  }
}
