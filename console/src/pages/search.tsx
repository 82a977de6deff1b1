// `/ws/NAME/search`: grep (file_grep, its flags) and ranked search (file_query). The form's state
// is the address (?mode=grep&q=…&type=regexp&i=1…), so a search can be shared and the back button
// returns to it. Every hit links into the file viewer at its line: /ws/NAME/files/PATH#L12 (a
// range: #L12-L20).
import { useEffect, useState } from "preact/hooks";
import { call } from "../api.js";
import { ErrorNote, Loading, WorkspacePage } from "../components.js";
import { Link, type Location, navigate, pathSegs, seg } from "../router.js";
import "./live.css";

interface GrepMatch {
  path: string;
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}
type GrepResult =
  | { mode: "matches"; matches: GrepMatch[]; truncated: boolean; cursor?: string }
  | { mode: "files"; files: string[]; truncated: boolean; cursor?: string }
  | { mode: "counts"; counts: { path: string; count: number }[]; truncated: boolean; cursor?: string };

interface QueryHit {
  path: string;
  start_line: number;
  end_line: number;
  score: number;
  snippet: string;
  search_types: string[];
}
interface QueryResult {
  status: "ok" | "unavailable";
  results: QueryHit[];
  warnings: string[];
}

/** The viewer's address for a file at a line (or lines). */
export const lineHref = (workspace: string, path: string, line: number, end?: number): string =>
  `/ws/${seg(workspace)}/files${pathSegs(path)}#L${line}${end !== undefined && end !== line ? `-L${end}` : ""}`;

const PAGE = 200;

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? "" : "s"}`;

/** "*.ts, src/**" or "*.{ts,tsx} docs/**": globs apart by commas or spaces outside braces. */
export function globs(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const c of text) {
    if (c === "{") depth++;
    else if (c === "}") depth = Math.max(0, depth - 1);
    if (depth === 0 && (c === "," || c === " ")) {
      if (current) out.push(current);
      current = "";
    } else current += c;
  }
  if (current) out.push(current);
  return out;
}

/** The search the address names, as file_grep's arguments (null: nothing asked yet). */
function grepArgs(workspace: string, q: URLSearchParams): Record<string, unknown> | null {
  const pattern = q.get("q") ?? "";
  if (pattern === "") return null;
  const args: Record<string, unknown> = { workspace, pattern, limit: PAGE };
  const type = q.get("type");
  if (type === "regexp") args.regexp = true;
  else if (type === "glob") args.glob = true;
  if (q.get("i") === "1") args.ignore_case = true;
  if (q.get("w") === "1") args.word_regexp = true;
  if (q.get("x") === "1") args.line_regexp = true;
  if (q.get("v") === "1") args.invert_match = true;
  const path = q.get("path");
  if (path) args.path = path;
  const include = q.get("include");
  if (include) args.include = globs(include);
  const exclude = q.get("exclude");
  if (exclude) args.exclude = globs(exclude);
  const context = Number(q.get("context") ?? "0");
  if (Number.isInteger(context) && context > 0) {
    args.context_before = context;
    args.context_after = context;
  }
  if (q.get("files") === "1") args.files_with_matches = true;
  else if (q.get("count") === "1") args.count = true;
  const most = Number(q.get("max") ?? "0");
  if (Number.isInteger(most) && most > 0) args.max_count = most;
  return args;
}

function queryArgs(workspace: string, q: URLSearchParams): Record<string, unknown> | null {
  const query = q.get("q") ?? "";
  if (query === "") return null;
  const args: Record<string, unknown> = { workspace, query, limit: 20 };
  const path = q.get("path");
  if (path) args.path = path;
  const mode = q.get("rank");
  if (mode === "keyword" || mode === "semantic") args.mode = mode;
  return args;
}

export function Search(props: { workspace: string; location: Location }) {
  const q = props.location.query;
  const mode = q.get("mode") === "query" ? "query" : "grep";
  const submit = (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    const next = new URLSearchParams();
    for (const [k, v] of data.entries()) {
      const s = String(v).trim();
      if (s !== "" && !(k === "context" && s === "0")) next.set(k, s);
    }
    navigate(`${props.location.path}?${next.toString()}`);
  };
  const formKey = q.toString();
  // Switching between grep and ranked search shows the other form at once, keeping the words.
  const switchTo = (to: "grep" | "query") => {
    const next = new URLSearchParams();
    next.set("mode", to);
    for (const k of ["q", "path"]) {
      const v = q.get(k);
      if (v) next.set(k, v);
    }
    navigate(`${props.location.path}?${next.toString()}`, true);
  };
  return (
    <WorkspacePage workspace={props.workspace} tab="search">
      <form class="search" aria-label="Search the files" onSubmit={submit} key={formKey}>
        <fieldset class="mode">
          <legend>Search by</legend>
          <label>
            <input type="radio" name="mode" value="grep" checked={mode === "grep"} onChange={() => switchTo("grep")} />{" "}
            text (grep)
          </label>
          <label>
            <input
              type="radio"
              name="mode"
              value="query"
              checked={mode === "query"}
              onChange={() => switchTo("query")}
            />{" "}
            relevance (ranked)
          </label>
        </fieldset>
        <div class="row">
          <label class="grow">
            {mode === "grep" ? "Pattern" : "Query"} <input name="q" type="search" value={q.get("q") ?? ""} required />
          </label>
          <button type="submit">Search</button>
        </div>
        <div class="row">
          <label>
            In <input name="path" placeholder="/" value={q.get("path") ?? ""} size={12} />
          </label>
          {mode === "grep" ? (
            <>
              <label>
                Pattern is{" "}
                <select name="type" aria-label="Pattern is" value={q.get("type") ?? "fixed"}>
                  <option value="fixed">fixed text</option>
                  <option value="regexp">regular expression (RE2)</option>
                  <option value="glob">glob (whole line)</option>
                </select>
              </label>
              <label>
                <input type="checkbox" name="i" value="1" checked={q.get("i") === "1"} /> ignore case
              </label>
              <label>
                <input type="checkbox" name="w" value="1" checked={q.get("w") === "1"} /> whole words
              </label>
              <label>
                <input type="checkbox" name="x" value="1" checked={q.get("x") === "1"} /> whole lines
              </label>
              <label>
                <input type="checkbox" name="v" value="1" checked={q.get("v") === "1"} /> non-matching lines
              </label>
              <label>
                <input type="checkbox" name="files" value="1" checked={q.get("files") === "1"} /> files only
              </label>
              <label>
                <input type="checkbox" name="count" value="1" checked={q.get("count") === "1"} /> counts per file
              </label>
              <label>
                Include <input name="include" placeholder="*.ts, src/**" value={q.get("include") ?? ""} size={12} />
              </label>
              <label>
                Exclude <input name="exclude" placeholder="node_modules" value={q.get("exclude") ?? ""} size={12} />
              </label>
              <label>
                At most per file <input name="max" type="number" min={1} value={q.get("max") ?? ""} size={4} />
              </label>
              <label>
                Context lines{" "}
                <input name="context" type="number" min={0} max={20} value={q.get("context") ?? "0"} size={3} />
              </label>
            </>
          ) : (
            <label>
              Ranking{" "}
              <select name="rank" aria-label="Ranking" value={q.get("rank") ?? "query"}>
                <option value="query">keyword + semantic</option>
                <option value="keyword">keyword (BM25)</option>
                <option value="semantic">semantic</option>
              </select>
            </label>
          )}
        </div>
      </form>
      {mode === "grep" ? (
        <GrepResults workspace={props.workspace} args={grepArgs(props.workspace, q)} />
      ) : (
        <QueryResults workspace={props.workspace} args={queryArgs(props.workspace, q)} />
      )}
    </WorkspacePage>
  );
}

function GrepResults(props: { workspace: string; args: Record<string, unknown> | null }) {
  const [pages, setPages] = useState<GrepResult[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const argsKey = JSON.stringify(props.args);
  const load = (cursor?: string) => {
    if (!props.args) return;
    setLoading(true);
    call<GrepResult>("file_grep", cursor ? { ...props.args, cursor } : props.args).then(
      (r) => {
        setPages((old) => (cursor ? [...old, r] : [r]));
        setError(null);
        setLoading(false);
      },
      (e: Error) => {
        setError(e.message);
        setLoading(false);
      },
    );
  };
  // `argsKey` stands for the arguments: a new search starts over.
  useEffect(() => {
    setPages([]);
    setError(null);
    load();
  }, [argsKey]);
  if (!props.args) return <p class="muted">Type a pattern and press Search.</p>;
  if (error) return <ErrorNote error={error} />;
  if (pages.length === 0) return <Loading what="matches" />;
  const last = pages[pages.length - 1] as GrepResult;
  const ws = props.workspace;
  const matches = pages.flatMap((p) => (p.mode === "matches" ? p.matches : []));
  const files = pages.flatMap((p) => (p.mode === "files" ? p.files : []));
  const counts = pages.flatMap((p) => (p.mode === "counts" ? p.counts : []));
  const none = matches.length + files.length + counts.length === 0;
  // Matches grouped by file, in the order grep gives (path, then line).
  const groups: { path: string; matches: GrepMatch[] }[] = [];
  for (const m of matches) {
    const g = groups[groups.length - 1];
    if (g && g.path === m.path) g.matches.push(m);
    else groups.push({ path: m.path, matches: [m] });
  }
  return (
    <section class="results" aria-label="Results">
      <p class="muted" aria-live="polite">
        {none
          ? "No matches."
          : files.length > 0
            ? plural(files.length, "file")
            : counts.length > 0
              ? `${plural(
                  counts.reduce((n, c) => n + c.count, 0),
                  "matching line",
                )} in ${plural(counts.length, "file")}`
              : `${plural(matches.length, "matching line")} in ${plural(groups.length, "file")}${last.truncated ? " (more below)" : ""}`}
      </p>
      {files.length > 0 && (
        <ul class="files">
          {files.map((f) => (
            <li key={f} class="mono">
              <Link href={`/ws/${seg(ws)}/files${pathSegs(f)}`}>{f}</Link>
            </li>
          ))}
        </ul>
      )}
      {counts.length > 0 && (
        <table class="counts">
          <thead>
            <tr>
              <th scope="col">File</th>
              <th scope="col">Lines</th>
            </tr>
          </thead>
          <tbody>
            {counts.map((c) => (
              <tr key={c.path}>
                <td class="mono">
                  <Link href={`/ws/${seg(ws)}/files${pathSegs(c.path)}`}>{c.path}</Link>
                </td>
                <td>{c.count}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {groups.map((g) => (
        <article key={g.path} class="hits">
          <h2 class="mono">
            <Link href={`/ws/${seg(ws)}/files${pathSegs(g.path)}`}>{g.path}</Link>
          </h2>
          <ol class="lines">
            {g.matches.map((m) => (
              <li key={m.line}>
                {(m.before ?? []).map((text, i) => (
                  <Line key={`b${i}`} n={m.line - (m.before?.length ?? 0) + i} text={text} context />
                ))}
                <Line n={m.line} text={m.text} href={lineHref(ws, m.path, m.line)} />
                {(m.after ?? []).map((text, i) => (
                  <Line key={`a${i}`} n={m.line + 1 + i} text={text} context />
                ))}
              </li>
            ))}
          </ol>
        </article>
      ))}
      {last.truncated && last.cursor && (
        <button type="button" disabled={loading} onClick={() => load(last.cursor)}>
          {loading ? "Loading…" : "More results"}
        </button>
      )}
    </section>
  );
}

function Line(props: { n: number; text: string; href?: string; context?: boolean }) {
  return (
    <div class={props.context ? "line context" : "line"}>
      {props.href ? (
        <Link href={props.href} class="ln" title={`open at line ${props.n}`}>
          {String(props.n)}
        </Link>
      ) : (
        <span class="ln">{props.n}</span>
      )}
      <code>{props.text}</code>
    </div>
  );
}

function QueryResults(props: { workspace: string; args: Record<string, unknown> | null }) {
  const [result, setResult] = useState<QueryResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const argsKey = JSON.stringify(props.args);
  useEffect(() => {
    setResult(null);
    setError(null);
    if (!props.args) return;
    let live = true;
    call<QueryResult>("file_query", props.args).then(
      (r) => live && setResult(r),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
  }, [argsKey]);
  if (!props.args) return <p class="muted">Ask a question or give keywords and press Search.</p>;
  if (error) return <ErrorNote error={error} />;
  if (!result) return <Loading what="results" />;
  return (
    <section class="results" aria-label="Results">
      {result.warnings.map((w) => (
        <p key={w} class="muted">
          {w}
        </p>
      ))}
      {result.results.length === 0 ? (
        <p class="muted">No results.</p>
      ) : (
        <ol class="ranked">
          {result.results.map((h) => (
            <li key={`${h.path}:${h.start_line}`}>
              <h2 class="mono">
                <Link href={lineHref(props.workspace, h.path, h.start_line, h.end_line)}>
                  {h.path}:{h.start_line}–{h.end_line}
                </Link>{" "}
                <span class="muted">
                  score {h.score.toFixed(3)} · {h.search_types.join("+")}
                </span>
              </h2>
              <pre>{h.snippet}</pre>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
