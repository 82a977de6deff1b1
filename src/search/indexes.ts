// The search indexes an operation may use beside the volume it searches: grep's content index and
// ranked search's query index, both keyed by content hash and shared by every volume of one afs home.
import type { QueryIndex } from "./query-index.js";
import type { TextIndex } from "./text-index.js";

export interface SearchIndexes {
  /**
   * The content index grep uses to pick candidate files (trigrams keyed by content hash) and its
   * cache of decoded texts. Absent (a plain directory): grep reads every file.
   */
  readonly text?: TextIndex;
  /**
   * The persistent index ranked search (query) uses: passages, BM25 and vectors keyed by content
   * hash. Absent (a plain directory): files are split and ranked per query, keyword only.
   */
  readonly query?: QueryIndex;
}
