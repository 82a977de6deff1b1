// A query index that lives for one query, for volumes without a persistent one (a plain
// directory): files are read and chunked on the spot and ranked by BM25 in memory, with statistics
// over the files in scope. Keyword only: semantic search needs a workspace's stored vectors.
import { isAfsError } from "../core/errors.js";
import { type Hash, sha256 } from "../core/hash.js";
import { decodeText } from "../core/text.js";
import { bm25Rank } from "./bm25.js";
import { type ChunkStrategy, chunkDocument, chunkFile, MAX_FILE_BYTES } from "./chunks.js";
import type { Embedder, IndexedFile, KeywordHit, QueryIndex, ScopeFile, VectorHit } from "./query-index.js";
import { type KeywordQuery, tokenize } from "./tokens.js";

/** Where a scan reads files: a Volume will do (only these two of its members are used). */
export interface ScannedFiles {
  /** Names the files in messages: "directory /srv/data". */
  readonly label: string;
  /** A file's bytes; NOT_FOUND or INVALID_ARGUMENT when it vanished or became a directory. */
  readFile(path: string): Promise<Buffer>;
}

interface ScannedChunk {
  blob: Hash;
  seq: number;
  start_line: number;
  end_line: number;
  hash: Hash;
  tokens: string[];
}

export class ScanIndex implements QueryIndex {
  private readonly blobs = new Map<Hash, { text: string | null; chunks: ScannedChunk[] }>();

  constructor(private readonly files: ScannedFiles) {}

  async prepare(files: readonly ScopeFile[], strategy: ChunkStrategy): Promise<IndexedFile[]> {
    const out: IndexedFile[] = [];
    for (const f of files) {
      if (f.size > MAX_FILE_BYTES) continue;
      const data = await this.read(f.path);
      if (!data) continue;
      const hash = f.hash ?? sha256(data);
      if (!this.blobs.has(hash)) {
        const chunks = chunkFile(data, f.path, strategy).chunks.map((c) => ({
          blob: hash,
          seq: c.seq,
          start_line: c.start_line,
          end_line: c.end_line,
          hash: "",
          tokens: tokenize(chunkDocument(c)),
        }));
        this.blobs.set(hash, { text: decodeText(data), chunks });
      }
      out.push({ path: f.path, hash });
    }
    return out;
  }

  async keyword(
    query: KeywordQuery,
    _strategy: ChunkStrategy,
    scope: ReadonlySet<Hash>,
    limit: number,
  ): Promise<KeywordHit[]> {
    const docs = [...scope].flatMap((h) => this.blobs.get(h)?.chunks ?? []);
    return bm25Rank(docs, query)
      .slice(0, limit)
      .map(({ doc: { tokens: _, ...chunk }, score }) => ({ chunk, score }));
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
