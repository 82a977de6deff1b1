// The file viewer: numbered, highlighted lines a page at a time through file_lines (a file of any
// size is never loaded whole); a binary file by its size and type only; a symlink by its target.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, call } from "../api.js";
import { ErrorNote, Loading } from "../components.js";
import { Link, pathSegs, seg } from "../router.js";
import type { Item } from "./files.js";
import { highlightLines, languageOf } from "./highlight.js";
import { exact, size } from "./ws-format.js";

/** Lines per page of a file. */
export const LINES = 500;
/** Lines per page when a page of LINES is more than one answer may carry (very long lines). */
const FEW_LINES = 20;

interface Lines {
  start: number;
  end: number;
  total_lines: number;
  content: string;
}

type Loaded =
  | { data: Lines; binary: false; error: null }
  | { data: null; binary: true; error: null }
  | { data: null; binary: false; error: ApiError | null };

/** Files up to this size are read whole (one call, and it says whether the file is text); larger ones a page at a time. */
const WHOLE_BYTES = 128 * 1024;

/** A page of a small file read whole: the same shape file_lines gives. */
function window(content: string, start: number, end: number): Lines {
  const all = content.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const last = Math.min(end, all.length);
  return { start, end: last, total_lines: all.length, content: all.slice(start - 1, last).join("") };
}

/**
 * One page of lines, or that the file is binary. A small file comes whole from file_read, which
 * flags a binary file; a large one through file_lines, which refuses a binary file by its code.
 */
function useLines(
  args: { workspace: string; path: string; start: number; end: number; checkpoint?: string } | null,
  bytes: number,
): Loaded {
  const [state, setState] = useState<Loaded>({ data: null, binary: false, error: null });
  const [whole, setWhole] = useState<{ content?: string; binary?: boolean } | null>(null);
  const key = JSON.stringify(args && { ...args, start: bytes <= WHOLE_BYTES ? 0 : args.start });
  useEffect(() => {
    if (!args) return;
    let live = true;
    if (bytes > WHOLE_BYTES) setState({ data: null, binary: false, error: null });
    const { start, end, ...where } = args;
    const asked =
      bytes <= WHOLE_BYTES
        ? call<{ content?: string; binary?: boolean }>("file_read", where).then((r) => live && setWhole(r))
        : call<Lines>("file_lines", args).then((data) => live && setState({ data, binary: false, error: null }));
    asked.catch((e: unknown) => {
      if (!live) return;
      const error = e instanceof ApiError ? e : new ApiError(0, "IO_ERROR", String(e));
      setState(
        error.code === "INVALID_ARGUMENT"
          ? { data: null, binary: true, error: null }
          : { data: null, binary: false, error },
      );
    });
    return () => {
      live = false;
    };
  }, [key]);
  if (bytes > WHOLE_BYTES || !args) return state;
  if (state.error) return state;
  if (!whole) return { data: null, binary: false, error: null };
  if (whole.binary || whole.content === undefined) return { data: null, binary: true, error: null };
  return { data: window(whole.content, args.start, args.end), binary: false, error: null };
}

/** What a binary file's name says it holds; the viewer shows no bytes. */
const BINARY_TYPES: Record<string, string> = {
  png: "PNG image",
  jpg: "JPEG image",
  jpeg: "JPEG image",
  gif: "GIF image",
  webp: "WebP image",
  ico: "icon",
  bmp: "bitmap image",
  pdf: "PDF document",
  zip: "zip archive",
  gz: "gzip data",
  tgz: "gzipped tar archive",
  tar: "tar archive",
  xz: "xz data",
  zst: "zstd data",
  "7z": "7-Zip archive",
  wasm: "WebAssembly module",
  exe: "Windows executable",
  dll: "Windows library",
  so: "shared library",
  dylib: "shared library",
  o: "object file",
  a: "static library",
  class: "Java class",
  jar: "Java archive",
  woff: "font",
  woff2: "font",
  ttf: "font",
  otf: "font",
  mp3: "audio",
  wav: "audio",
  ogg: "audio",
  mp4: "video",
  webm: "video",
  mov: "video",
  sqlite: "SQLite database",
  db: "database",
  bin: "binary data",
};

const binaryType = (name: string): string => {
  const dot = name.lastIndexOf(".");
  return (dot > 0 && BINARY_TYPES[name.slice(dot + 1).toLowerCase()]) || "binary data (not UTF-8 text)";
};

export function FileView(props: { workspace: string; item: Item; at: string | null; line: number | null }) {
  const { workspace, item, at } = props;
  const [pageSize, setPageSize] = useState(LINES);
  const firstOf = (line: number) => Math.floor((line - 1) / pageSize) * pageSize + 1;
  const [start, setStart] = useState(firstOf(props.line ?? 1));
  useEffect(() => setStart(firstOf(props.line ?? 1)), [props.line, pageSize]);
  const lines = useLines(
    item.kind === "file"
      ? { workspace, path: item.path, start, end: start + pageSize - 1, ...(at ? { checkpoint: at } : {}) }
      : null,
    item.size,
  );

  const history = `/ws/${seg(workspace)}/history${pathSegs(item.path)}`;
  const head = (
    <div class="viewer-head">
      <h2>{item.name}</h2>
      <span class="muted" title={`${item.size} bytes`}>
        {item.kind} · {size(item.size)} · modified {exact(item.modified_at)}
        {at ? ` · checkpoint ${at}` : " · live"}
      </span>
      <Link href={history}>History</Link>
    </div>
  );
  if (item.kind === "symlink") {
    return (
      <section class="viewer" aria-label={`File ${item.name}`}>
        {head}
        <p>
          Symbolic link to <code>{item.target ?? ""}</code>
        </p>
      </section>
    );
  }
  return (
    <section class="viewer" aria-label={`File ${item.name}`}>
      {head}
      <Body
        lines={lines}
        item={item}
        pageSize={pageSize}
        onTooBig={() => pageSize > FEW_LINES && setPageSize(FEW_LINES)}
        target={props.line}
        onPage={setStart}
      />
    </section>
  );
}

function Body(props: {
  lines: Loaded;
  item: Item;
  pageSize: number;
  onTooBig(): void;
  target: number | null;
  onPage(first: number): void;
}) {
  const { lines, item } = props;
  if (lines.binary) return <Binary item={item} />;
  if (lines.error) return <LinesError error={lines.error} onTooBig={props.onTooBig} />;
  if (!lines.data) return <Loading what={item.name} />;
  const { start, end, total_lines: total } = lines.data;
  const pager =
    total > props.pageSize ? (
      <div class="files-pager">
        <span class="muted">
          Lines {start}–{end} of {total}
        </span>
        {start > 1 && (
          <button type="button" onClick={() => props.onPage(Math.max(1, start - props.pageSize))}>
            Previous {props.pageSize}
          </button>
        )}
        {end < total && (
          <button type="button" onClick={() => props.onPage(end + 1)}>
            Next {props.pageSize}
          </button>
        )}
        <GoToLine
          total={total}
          onGo={(line) => props.onPage(Math.floor((line - 1) / props.pageSize) * props.pageSize + 1)}
        />
      </div>
    ) : null;
  if (total === 0) return <p class="muted">Empty file.</p>;
  return (
    <>
      {pager}
      <Code content={lines.data.content} start={start} name={item.name} target={props.target} />
      {pager}
    </>
  );
}

const Binary = (props: { item: Item }) => (
  <p class="viewer-binary">
    Binary file: {size(props.item.size)} ({props.item.size} bytes), {binaryType(props.item.name)}. Its content is not
    shown.
  </p>
);

/** A page too big for one answer (very long lines) is asked for again with fewer lines. */
function LinesError(props: { error: ApiError; onTooBig(): void }) {
  const { code, message } = props.error;
  useEffect(() => {
    if (code === "QUOTA_EXCEEDED") props.onTooBig();
  }, [code]);
  return <ErrorNote error={message} />;
}

function GoToLine(props: { total: number; onGo(line: number): void }) {
  const [value, setValue] = useState("");
  return (
    <form
      class="goto"
      onSubmit={(e) => {
        e.preventDefault();
        const n = Number.parseInt(value, 10);
        if (n >= 1) props.onGo(Math.min(n, props.total));
      }}
    >
      <label for="goto-line">Go to line</label>{" "}
      <input
        id="goto-line"
        type="number"
        min={1}
        max={props.total}
        value={value}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
    </form>
  );
}

/** Numbered lines; highlighted when the name says which language, plain text otherwise. */
function Code(props: { content: string; start: number; name: string; target: number | null }) {
  const text = props.content.replace(/\r?\n$/, "");
  const language = languageOf(props.name);
  const html = language ? highlightLines(text, language) : null;
  const plain = html ? null : text.split("\n");
  const count = html?.length ?? plain?.length ?? 0;
  const marked = useRef<HTMLTableRowElement>(null);
  useEffect(() => marked.current?.scrollIntoView({ block: "center" }), [props.target, props.start]);
  const rows = [];
  for (let i = 0; i < count; i++) {
    const n = props.start + i;
    const mark = n === props.target;
    rows.push(
      <tr key={n} id={`L${n}`} class={mark ? "target" : undefined} ref={mark ? marked : undefined}>
        <td class="ln" data-line={n} aria-hidden="true">
          {n}
        </td>
        {html ? (
          // highlight.js escapes the file's text; its own spans are the only markup (see highlight.ts).
          <td class="code" dangerouslySetInnerHTML={{ __html: html[i] as string }} />
        ) : (
          <td class="code">{plain?.[i]}</td>
        )}
      </tr>,
    );
  }
  return (
    <div class="code-scroll">
      <table class={`code-table${language ? ` hljs language-${language}` : ""}`} aria-label={`Lines of ${props.name}`}>
        <tbody>{rows}</tbody>
      </table>
    </div>
  );
}
