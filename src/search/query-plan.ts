// What a file_query asks for, as a list of searches: plain text, a typed query document (one
// `lex:` / `vec:` / `hyde:` / `intent:` clause per line), explicit `searches`, filtered by mode.
import { AfsError } from "../core/errors.js";

export type SearchType = "lex" | "vec" | "hyde";
export type QueryMode = "query" | "keyword" | "semantic";

export interface Search {
  type: SearchType;
  query: string;
}

export interface QueryPlan {
  searches: Search[];
  /** Extra context for the searches (steers semantic search and snippet choice). */
  intent?: string;
  /** Things the caller should know: searches the mode left out. */
  warnings: string[];
}

const CLAUSE = /^\s*(lex|vec|hyde|intent)\s*:\s*(.*?)\s*$/i;

/**
 * A typed query document's clauses, or null when `text` is plain text (no line starts with a
 * clause type). A document that mixes typed and untyped lines is refused, naming the line.
 */
export function parseQueryDocument(text: string): { searches: Search[]; intent: string[] } | null {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== "");
  if (!lines.some((l) => CLAUSE.test(l))) return null;
  const searches: Search[] = [];
  const intent: string[] = [];
  for (const line of lines) {
    const m = CLAUSE.exec(line);
    if (!m) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        `query mixes typed clauses with the plain line ${JSON.stringify(line.trim())}; start every line with lex:, vec:, hyde: or intent:, or send plain text only`,
      );
    }
    const type = (m[1] as string).toLowerCase();
    const body = m[2] as string;
    if (body === "") throw new AfsError("INVALID_ARGUMENT", `the ${type}: clause is empty; write what to search for`);
    if (type === "intent") intent.push(body);
    else searches.push({ type: type as SearchType, query: body });
  }
  return { searches, intent };
}

const RUNS: Record<QueryMode, readonly SearchType[]> = {
  query: ["lex", "vec", "hyde"],
  keyword: ["lex"],
  semantic: ["vec", "hyde"],
};

/** The searches a call runs: a plain query becomes lex and/or vec by mode; typed ones are kept if the mode runs them. */
export function planQuery(input: {
  query?: string | undefined;
  searches?: readonly Search[] | undefined;
  intent?: string | undefined;
  mode: QueryMode;
}): QueryPlan {
  const { mode } = input;
  const text = input.query?.trim() ?? "";
  const doc = text === "" ? null : parseQueryDocument(text);
  const asked: Search[] = [];
  const intent: string[] = input.intent?.trim() ? [input.intent.trim()] : [];
  if (doc) {
    asked.push(...doc.searches);
    intent.push(...doc.intent);
  } else if (text !== "") {
    if (mode !== "semantic") asked.push({ type: "lex", query: text });
    if (mode !== "keyword") asked.push({ type: "vec", query: text });
  }
  for (const s of input.searches ?? []) {
    if (s.query.trim() === "") throw new AfsError("INVALID_ARGUMENT", `a ${s.type} search has an empty query`);
    asked.push({ type: s.type, query: s.query.trim() });
  }
  if (asked.length === 0) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      intent.length > 0
        ? "intent alone is not a search; add a query or a lex:/vec:/hyde: clause"
        : "give query (plain text or lex:/vec:/hyde: lines) or searches",
    );
  }
  const searches = asked.filter((s) => RUNS[mode].includes(s.type));
  const left = [...new Set(asked.filter((s) => !RUNS[mode].includes(s.type)).map((s) => s.type))];
  const warnings =
    left.length > 0 ? [`mode ${mode} runs ${RUNS[mode].join("/")} searches only; left out: ${left.join(", ")}`] : [];
  if (searches.length === 0) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `mode ${mode} runs ${RUNS[mode].join("/")} searches, and this query has only ${left.join(", ")}; change mode or the clauses`,
    );
  }
  return { searches, ...(intent.length > 0 ? { intent: intent.join(" ") } : {}), warnings };
}
