// `/ws/NAME/diff?from=A&to=B&view=split`: what changed between two checkpoints or a checkpoint
// and live (`to` defaults to live, `from` to the head). The summary shows at once; the files'
// hunks arrive page by page (checkpoint_diff's offset/limit) and are drawn in batches while the
// reader scrolls or the browser is idle, so thousands of files never block the page.
import { Component, type JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { call } from "../api.js";
import { ErrorNote, Loading, WorkspacePage } from "../components.js";
import { useCall } from "../hooks.js";
import { Link, navigate, pathSegs, seg } from "../router.js";
import { useSession } from "../session.js";
import { type DiffMode, ModeSwitch, PatchView } from "./diff-view.js";
import "./checkpoints.css";

export interface Change {
  status: "added" | "modified" | "deleted" | "renamed";
  path: string;
  old_path?: string;
  kind: "file" | "dir" | "symlink";
  patch?: string;
  binary?: boolean;
}

export interface DiffAnswer {
  base: string;
  target: string;
  summary: { added: number; modified: number; deleted: number; renamed: number };
  total: number;
  changes: Change[];
  next_offset: number | null;
}

export interface CheckpointRow {
  name: string;
  kind: string;
  description: string;
  created_at: string;
  actor: string;
  parent: string | null;
  changes?: number;
}

export interface CheckpointList {
  workspace: string;
  head: string;
  dirty: boolean;
  checkpoints: CheckpointRow[];
}

/** Changes asked for per call, and files drawn per batch. */
const PAGE = 100;
const BATCH = 20;
/** How far below the window the next batch is drawn already. */
const AHEAD_PX = 1500;

export const LIVE = "live";

/** A diff page's address; live is the default target and left out. */
export function diffHref(workspace: string, from: string, to: string, mode: DiffMode = "unified"): string {
  const q = new URLSearchParams({ from });
  if (to !== LIVE) q.set("to", to);
  if (mode === "split") q.set("view", "split");
  return `/ws/${seg(workspace)}/diff?${q}`;
}

/** Checkpoint_diff's arguments for from → to, where either side may be live. */
export const diffArgs = (workspace: string, from: string, to: string): Record<string, unknown> => ({
  workspace,
  ...(from === LIVE ? {} : { base: from }),
  ...(to === LIVE ? {} : { target: to }),
});

const idle = (fn: () => void): (() => void) => {
  if (typeof requestIdleCallback === "function") {
    const id = requestIdleCallback(fn, { timeout: 200 });
    return () => cancelIdleCallback(id);
  }
  const id = setTimeout(fn, 16);
  return () => clearTimeout(id);
};

export function Summary(props: { summary: DiffAnswer["summary"]; total: number }) {
  const s = props.summary;
  return (
    <p class="diff-summary">
      <span class="badge added">{s.added} added</span> <span class="badge modified">{s.modified} modified</span>{" "}
      <span class="badge deleted">{s.deleted} deleted</span> <span class="badge renamed">{s.renamed} renamed</span>{" "}
      <span class="muted">
        ({props.total} {props.total === 1 ? "path" : "paths"})
      </span>
    </p>
  );
}

type FileChangeProps = { workspace: string; change: Change; mode: DiffMode };

/** One changed path: its header and, for a modified text file, its hunks. */
export function FileChange(props: FileChangeProps) {
  const c = props.change;
  const history = c.kind === "file" ? `/ws/${seg(props.workspace)}/history${pathSegs(c.path)}` : null;
  let body: JSX.Element;
  if (c.patch !== undefined) body = <PatchView patch={c.patch} mode={props.mode} label={c.path} />;
  else if (c.binary) body = <p class="muted">Binary content differs.</p>;
  else if (c.status === "added") body = <p class="muted">New {c.kind}.</p>;
  else if (c.status === "deleted") body = <p class="muted">Deleted {c.kind}.</p>;
  else if (c.status === "renamed") body = <p class="muted">Moved, content unchanged.</p>;
  else if (c.kind === "file") body = <p class="muted">Too large to show line changes.</p>;
  else body = <p class="muted">Changed {c.kind}.</p>;
  return (
    <section class="file-change" aria-label={c.path}>
      <h3>
        <span class={`badge ${c.status}`}>{c.status}</span>{" "}
        {c.old_path !== undefined && (
          <>
            <span class="mono">{c.old_path}</span> →{" "}
          </>
        )}
        <span class="mono">{c.path}</span>
        {history && (
          <>
            {" "}
            <Link href={history} class="small">
              history
            </Link>
          </>
        )}
      </h3>
      {body}
    </section>
  );
}

/**
 * A drawn file stays as it is while later batches arrive: without this every batch would parse
 * and diff every earlier file's hunks again, and the page would slow down as it grows.
 */
class KeptFileChange extends Component<FileChangeProps> {
  override shouldComponentUpdate(next: FileChangeProps): boolean {
    const p = this.props;
    return next.change !== p.change || next.mode !== p.mode || next.workspace !== p.workspace;
  }
  override render() {
    return <FileChange {...this.props} />;
  }
}

interface Loaded {
  key: string;
  answer: DiffAnswer | null;
  changes: Change[];
  next: number | null;
  error: string | null;
}

export function DiffBody(props: { workspace: string; from: string; to: string; mode: DiffMode }) {
  const key = `${props.workspace}\n${props.from}\n${props.to}`;
  const empty: Loaded = { key, answer: null, changes: [], next: null, error: null };
  const [loaded, setLoaded] = useState<Loaded>(empty);
  const [shown, setShown] = useState(BATCH);
  const fetching = useRef(false);
  const sentinel = useRef<HTMLDivElement>(null);
  const current = loaded.key === key ? loaded : empty;

  // The comparison shown now: an answer for one the reader has since left is dropped.
  const shownKey = useRef(key);
  shownKey.current = key;
  const fetchPage = (offset: number) => {
    fetching.current = true;
    call<DiffAnswer>("checkpoint_diff", { ...diffArgs(props.workspace, props.from, props.to), offset, limit: PAGE })
      .then(
        (a) => {
          if (shownKey.current !== key) return;
          // A check that ran on a render from before the last page arrived may ask for that page
          // again: a page is added only where the list ends.
          setLoaded((l) =>
            offset === 0
              ? { key, answer: a, changes: a.changes, next: a.next_offset, error: null }
              : l.changes.length === offset
                ? { ...l, changes: [...l.changes, ...a.changes], next: a.next_offset }
                : l,
          );
        },
        (e: Error) => shownKey.current === key && setLoaded({ ...empty, error: e.message }),
      )
      .finally(() => {
        if (shownKey.current === key) fetching.current = false;
      });
  };

  useEffect(() => {
    setShown(BATCH);
    setLoaded(empty);
    fetchPage(0);
  }, [key]);

  // After every render, and on scroll: when the end of what is drawn comes near the window, draw
  // the next batch, or ask for the next page once every loaded file is drawn.
  useEffect(() => {
    const check = () => {
      const el = sentinel.current;
      if (!el || el.getBoundingClientRect().top > window.innerHeight + AHEAD_PX) return;
      if (shown < current.changes.length) setShown((n) => n + BATCH);
      else if (current.next !== null && !fetching.current) fetchPage(current.next);
    };
    // One measurement per idle moment, however many scroll events come in between: measuring
    // forces a layout.
    let cancel: (() => void) | null = idle(() => {
      cancel = null;
      check();
    });
    const onScroll = () => {
      if (cancel) return;
      cancel = idle(() => {
        cancel = null;
        check();
      });
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      cancel?.();
      window.removeEventListener("scroll", onScroll);
    };
  });

  if (current.error) return <ErrorNote error={current.error} />;
  if (!current.answer) return <Loading what="the changes" />;
  const done = shown >= current.changes.length && current.next === null;
  return (
    <>
      <Summary summary={current.answer.summary} total={current.answer.total} />
      {current.answer.total === 0 && <p>No differences.</p>}
      <div class="file-changes">
        {current.changes.slice(0, shown).map((c) => (
          <KeptFileChange key={c.path} workspace={props.workspace} change={c} mode={props.mode} />
        ))}
      </div>
      <div ref={sentinel} class="sentinel">
        {!done && (
          <p class="muted" aria-live="polite">
            Showing {Math.min(shown, current.changes.length)} of {current.answer.total} paths…
          </p>
        )}
      </div>
    </>
  );
}

/** What a session's profile keeps it from, said instead of a page of refusals. */
export const NotAllowed = (props: { profile: string; what: string }) => (
  <p class="note">
    This session's profile ({props.profile}) may not {props.what}.
  </p>
);

export function DiffPage(props: { workspace: string; query: URLSearchParams }) {
  const session = useSession();
  const allowed = session.can("checkpoint_list") && session.can("checkpoint_diff");
  const list = useCall<CheckpointList>(allowed ? "checkpoint_list" : null, { workspace: props.workspace });
  if (!allowed) {
    return (
      <WorkspacePage workspace={props.workspace} tab="diff">
        <NotAllowed profile={session.profile} what="compare checkpoints" />
      </WorkspacePage>
    );
  }
  const mode: DiffMode = props.query.get("view") === "split" ? "split" : "unified";
  const from = props.query.get("from") ?? list.data?.head ?? null;
  const to = props.query.get("to") ?? LIVE;
  const go = (f: string, t: string, m: DiffMode) => navigate(diffHref(props.workspace, f, t, m), true);
  const points = [LIVE, ...(list.data?.checkpoints.map((c) => c.name) ?? [])];
  if (from !== null && !points.includes(from)) points.push(from);
  if (!points.includes(to)) points.push(to);
  return (
    <WorkspacePage workspace={props.workspace} tab="diff">
      <form class="diff-controls" onSubmit={(e) => e.preventDefault()}>
        <label>
          From{" "}
          <select value={from ?? ""} onChange={(e) => go(e.currentTarget.value, to, mode)}>
            {points.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          To{" "}
          <select value={to} onChange={(e) => from !== null && go(from, e.currentTarget.value, mode)}>
            {points.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <ModeSwitch mode={mode} onChange={(m) => from !== null && go(from, to, m)} />
      </form>
      {list.error && <ErrorNote error={list.error} />}
      {from === null ? (
        !list.error && <Loading what="the checkpoints" />
      ) : (
        <DiffBody workspace={props.workspace} from={from} to={to} mode={mode} />
      )}
    </WorkspacePage>
  );
}
