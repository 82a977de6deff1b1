// `/activity` and `/ws/NAME/activity`: the activity log, live. The stream (/api/events) opens
// first and says where each log stands (ready); the history up to there comes from
// workspace_activity, and every change after it arrives over the stream, from whichever process or
// machine made it. Filters live in the address (?actor=&surface=&path=&outcome=) so a filtered
// view can be shared.
import { useEffect, useRef, useState } from "preact/hooks";
import { call } from "../api.js";
import { ErrorNote, WorkspacePage } from "../components.js";
import { Link, type Location, navigate, pathSegs, seg } from "../router.js";
import { useSession } from "../session.js";
import "./live.css";

/** One change, as workspace_activity returns it and /api/events streams it (time there is ms). */
export interface ActivityRow {
  workspace: string;
  seq: number;
  time: string;
  op: string;
  path: string;
  actor: string;
  surface: string;
  outcome: string;
  new_sha256: string | null;
}

/** What the log calls each kind of result (src/core/event.ts OUTCOMES). */
const OUTCOMES = ["created", "modified", "deleted", "renamed", "checkpoint", "restored", "conflict"];
const SURFACES = ["mcp", "cli", "mount", "acp", "broker", "engine", "unknown"];
const FILTERS = ["actor", "surface", "path", "outcome"] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
/** How many rows the page keeps; older ones fall off the bottom. */
const KEEP = 1000;
const HISTORY = 200;

const filtersOf = (query: URLSearchParams): Filters => {
  const f: Filters = {};
  for (const k of FILTERS) {
    const v = query.get(k)?.trim();
    if (v) f[k] = v;
  }
  return f;
};

const normalized = (p: string): string => {
  const withSlash = p.startsWith("/") ? p : `/${p}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, "") : withSlash;
};

/** The filter as workspace_activity applies it, for rows arriving over the stream. */
function passes(f: Filters, r: ActivityRow): boolean {
  if (f.actor !== undefined && r.actor !== f.actor) return false;
  if (f.surface !== undefined && r.surface !== f.surface) return false;
  if (f.outcome !== undefined && r.outcome !== f.outcome) return false;
  if (f.path !== undefined) {
    const base = normalized(f.path);
    if (base !== "/" && r.path !== base && !r.path.startsWith(`${base}/`)) return false;
  }
  return true;
}

/** One formatter for every row: toLocaleString builds a new one per call, which a long log feels. */
const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });

const key = (r: ActivityRow) => `${r.workspace}\u0000${r.seq}`;

/** An event as the stream sends it: the engine's record plus its outcome. */
interface Streamed extends Omit<ActivityRow, "time" | "new_sha256"> {
  time: number;
  newHash: string | null;
}

export function Activity(props: { workspace: string | null; location: Location }) {
  const session = useSession();
  const filters = filtersOf(props.location.query);
  const filterKey = JSON.stringify(filters);
  const [rows, setRows] = useState<ActivityRow[]>([]);
  const [state, setState] = useState<"connecting" | "live" | "reconnecting" | "stopped">("connecting");
  const [error, setError] = useState<string | null>(null);
  const seen = useRef(new Set<string>());
  const allowed = session.can("workspace_activity");

  // `filterKey` stands for `filters`: the stream and history restart when the address's filters change.
  useEffect(() => {
    if (!allowed) return;
    seen.current = new Set();
    setRows([]);
    setError(null);
    setState("connecting");
    let closed = false;
    const add = (incoming: ActivityRow[]) => {
      const fresh = incoming.filter((r) => !seen.current.has(key(r)));
      if (fresh.length === 0) return;
      for (const r of fresh) seen.current.add(key(r));
      setRows((old) =>
        [...old, ...fresh].sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : b.seq - a.seq)).slice(0, KEEP),
      );
    };
    const stream = new EventSource(
      props.workspace === null ? "/api/events" : `/api/events?workspace=${encodeURIComponent(props.workspace)}`,
    );
    stream.addEventListener("ready", () => {
      setState("live");
      // The history up to where the stream starts (again after a reconnect: rows already shown
      // are skipped).
      const args: Record<string, unknown> = { ...filters, limit: HISTORY };
      if (props.workspace === null) args.every_workspace = true;
      else args.workspace = props.workspace;
      call<{ events: ActivityRow[] }>("workspace_activity", args).then(
        (r) => !closed && add(r.events),
        (e: Error) => !closed && setError(e.message),
      );
    });
    stream.addEventListener("change", (m: MessageEvent<string>) => {
      const e = JSON.parse(m.data) as Streamed;
      const row: ActivityRow = {
        workspace: e.workspace,
        seq: e.seq,
        time: new Date(e.time).toISOString(),
        op: e.op,
        path: e.path,
        actor: e.actor,
        surface: e.surface,
        outcome: e.outcome,
        new_sha256: e.newHash,
      };
      if (passes(filters, row)) add([row]);
    });
    stream.onerror = () => {
      if (closed) return;
      if (stream.readyState !== EventSource.CLOSED) {
        setState("reconnecting");
        return;
      }
      // Refused (signed out, token revoked, workspace gone): the browser gives up; an ordinary
      // call gets the server's reason.
      setState("stopped");
      const probe: Record<string, unknown> = { limit: 1 };
      if (props.workspace === null) probe.every_workspace = true;
      else probe.workspace = props.workspace;
      call("workspace_activity", probe).then(
        () => !closed && setError("The live stream stopped; reload the page to follow the log again."),
        (e: Error) => !closed && setError(e.message),
      );
    };
    return () => {
      closed = true;
      stream.close();
    };
  }, [props.workspace, filterKey, allowed]);

  const setFilter = (form: HTMLFormElement) => {
    const data = new FormData(form);
    const q = new URLSearchParams();
    for (const k of FILTERS) {
      const v = String(data.get(k) ?? "").trim();
      if (v) q.set(k, v);
    }
    const s = q.toString();
    navigate(`${props.location.path}${s ? `?${s}` : ""}`, true);
  };

  const body = (
    <section class="activity">
      {props.workspace === null && <h1>Activity</h1>}
      <form
        class="filters"
        aria-label="Filter the activity"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter(e.currentTarget);
        }}
      >
        <label>
          Actor <input name="actor" value={filters.actor ?? ""} key={`actor${filterKey}`} />
        </label>
        <label>
          Surface <input name="surface" list="surfaces" value={filters.surface ?? ""} key={`surface${filterKey}`} />
        </label>
        <datalist id="surfaces">
          {SURFACES.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
        <label>
          Path <input name="path" placeholder="/src" value={filters.path ?? ""} key={`path${filterKey}`} />
        </label>
        <label>
          Outcome{" "}
          <select
            name="outcome"
            aria-label="Outcome"
            value={filters.outcome ?? ""}
            key={`outcome${filterKey}`}
            onChange={(e) => e.currentTarget.form && setFilter(e.currentTarget.form)}
          >
            <option value="">any</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Filter</button>
        {Object.keys(filters).length > 0 && (
          <button type="button" onClick={() => navigate(props.location.path, true)}>
            Clear
          </button>
        )}
        <output class={`live-state ${state}`} aria-live="polite">
          {state === "live"
            ? "● live"
            : state === "connecting"
              ? "connecting…"
              : state === "reconnecting"
                ? "reconnecting…"
                : "stopped"}
        </output>
      </form>
      {error && <ErrorNote error={error} />}
      {rows.length === 0 ? (
        <p class="muted">No changes{Object.keys(filters).length > 0 ? " match these filters" : " yet"}.</p>
      ) : (
        <div class="scroll">
          <table class="activity-log">
            <thead>
              <tr>
                <th scope="col">Time</th>
                {props.workspace === null && <th scope="col">Workspace</th>}
                <th scope="col">Actor</th>
                <th scope="col">Surface</th>
                <th scope="col">Op</th>
                <th scope="col">Outcome</th>
                <th scope="col">Path</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={key(r)} data-seq={r.seq}>
                  <td class="time">
                    <time dateTime={r.time} title={r.time}>
                      {TIME.format(new Date(r.time))}
                    </time>
                  </td>
                  {props.workspace === null && (
                    <td>
                      <Link href={`/ws/${seg(r.workspace)}/activity`}>{r.workspace}</Link>
                    </td>
                  )}
                  <td>{r.actor}</td>
                  <td>{r.surface}</td>
                  <td>{r.op}</td>
                  <td>
                    <span class={`outcome ${r.outcome}`}>{r.outcome}</span>
                  </td>
                  <td class="mono">
                    <PathLink row={r} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {!allowed && <ErrorNote error={`profile ${session.profile} may not read the activity log`} />}
    </section>
  );
  return props.workspace === null ? (
    body
  ) : (
    <WorkspacePage workspace={props.workspace} tab="activity">
      {body}
    </WorkspacePage>
  );
}

/** Where a row leads: the file in the viewer; a deleted one's history; a checkpoint's timeline. */
function PathLink(props: { row: ActivityRow }) {
  const r = props.row;
  const ws = `/ws/${seg(r.workspace)}`;
  if (r.outcome === "checkpoint" || r.outcome === "restored") {
    return <Link href={`${ws}/checkpoints`}>{r.path}</Link>;
  }
  // A rename's first half (the path moved away from) carries no new content.
  if (r.outcome === "deleted" || (r.outcome === "renamed" && r.new_sha256 === null)) {
    return (
      <Link href={`${ws}/history${pathSegs(r.path)}`} title="deleted or moved away: see its history">
        {r.path}
      </Link>
    );
  }
  return <Link href={`${ws}/files${pathSegs(r.path)}`}>{r.path}</Link>;
}
