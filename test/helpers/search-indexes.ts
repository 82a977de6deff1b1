// An afs home's search indexes, passed to grep and query beside a volume as the MCP tools and the
// CLI pass them (without them a search takes the plain-directory path).
import type { SearchIndexes } from "../../src/search/indexes.js";
import type { Afs } from "../../src/workspace/afs.js";

export const indexesOf = (home: Afs): { indexes: SearchIndexes } => ({
  indexes: { text: home.indexes.text, query: home.indexes.query },
});
