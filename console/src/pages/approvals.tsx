// `/approvals`: what waiting `afs broker --consent console` and `afs acp --approve console`
// processes ask a person (paths, diffs), answered here; the grants still in force, revocable; the
// latest decisions. Refreshed every second, so a new request shows and a decision lands within one.
// Everything shown was written by an agent or server: text only.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, call } from "../api.js";
import { ErrorNote, Loading } from "../components.js";
import { useSession } from "../session.js";
import "./approvals.css";

interface Decision {
  outcome: "allowed" | "denied" | "expired" | "cancelled";
  paths: string[];
  grant: boolean;
  note: string | null;
  by: string;
  at: string;
}

interface Approval {
  id: string;
  kind: "consent" | "write" | "permission";
  state: "pending" | Decision["outcome"];
  title: string;
  message: string;
  process: string;
  pid: number;
  agent: string;
  machine: string;
  session: string | null;
  workspace: string | null;
  roots: string[];
  paths: string[];
  host_paths: (string | null)[];
  diff: string | null;
  diff_truncated: boolean;
  created_at: string;
  expires_at: string;
  decision: Decision | null;
  revoked_at: string | null;
}

interface ApprovalList {
  pending: Approval[];
  grants: Approval[];
  recent: Approval[];
}

const REFRESH_MS = 1000;

const KIND_LABEL: Record<Approval["kind"], string> = {
  consent: "file access",
  write: "write",
  permission: "permission",
};

const when = (iso: string): string => new Date(iso).toLocaleTimeString();

export function Approvals() {
  const { can } = useSession();
  const allowed = can("approval_list");
  const [list, setList] = useState<ApprovalList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const live = useRef(true);

  const load = useCallback(() => {
    call<ApprovalList>("approval_list").then(
      (r) => {
        if (!live.current) return;
        setList(r);
        setError(null);
      },
      (e: Error) => live.current && setError(e.message),
    );
  }, []);

  useEffect(() => {
    live.current = true;
    if (!allowed) return;
    load();
    const timer = setInterval(load, REFRESH_MS);
    return () => {
      live.current = false;
      clearInterval(timer);
    };
  }, [allowed]);

  if (!allowed) {
    return (
      <section>
        <h1>Approvals</h1>
        <p class="muted">Approvals are answered by an admin session; this session cannot see them.</p>
      </section>
    );
  }
  return (
    <section class="approvals">
      <h1>Approvals</h1>
      {error && <ErrorNote error={error} />}
      {!list ? (
        <Loading what="approval requests" />
      ) : (
        <>
          <h2 aria-live="polite">
            Waiting for you <span class="count">{list.pending.length}</span>
          </h2>
          {list.pending.length === 0 ? (
            <p class="muted">
              Nothing is waiting. Requests from afs broker --consent console and afs acp --approve console appear here.
            </p>
          ) : (
            list.pending.map((a) => <Pending key={a.id} approval={a} onDone={load} />)
          )}
          <h2>Grants in force</h2>
          <Grants grants={list.grants} onDone={load} />
          {list.recent.length > 0 && (
            <>
              <h2>Recent decisions</h2>
              <Recent rows={list.recent} />
            </>
          )}
        </>
      )}
    </section>
  );
}

function Who(props: { a: Approval }) {
  const { a } = props;
  return (
    <dl class="who-asks">
      <dt>Asked by</dt>
      <dd>{a.agent}</dd>
      <dt>Process</dt>
      <dd>
        {a.process} (pid {a.pid}) on {a.machine}
      </dd>
      {a.workspace !== null && (
        <>
          <dt>Workspace</dt>
          <dd>{a.workspace}</dd>
        </>
      )}
      {a.roots.length > 0 && (
        <>
          <dt>Roots</dt>
          <dd>{a.roots.join(", ")}</dd>
        </>
      )}
      <dt>Asked</dt>
      <dd>
        {when(a.created_at)}, waits until {when(a.expires_at)}
      </dd>
    </dl>
  );
}

function Pending(props: { approval: Approval; onDone: () => void }) {
  const a = props.approval;
  const { can } = useSession();
  const mayDecide = can("approval_decide");
  const [picked, setPicked] = useState<Set<string>>(() => new Set(a.paths));
  const [note, setNote] = useState("");
  const [grant, setGrant] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const decide = (allow: "all" | string[] | false): void => {
    setBusy(true);
    setError(null);
    const args: Record<string, unknown> = { id: a.id, allow };
    if (note.trim()) args.note = note.trim();
    if (grant && allow !== false) args.grant = true;
    call("approval_decide", args).then(
      () => props.onDone(),
      (e: Error) => {
        setBusy(false);
        setError(e instanceof ApiError ? e.message : String(e));
        props.onDone();
      },
    );
  };
  const toggle = (path: string, on: boolean): void => {
    const next = new Set(picked);
    if (on) next.add(path);
    else next.delete(path);
    setPicked(next);
  };
  const headingId = `req-${a.id}`;
  const some = a.paths.filter((p) => picked.has(p));
  return (
    <article class="request" aria-labelledby={headingId}>
      <h3 id={headingId}>
        <span class={`kind kind-${a.kind}`}>{KIND_LABEL[a.kind]}</span> {a.title}
      </h3>
      {a.message && <p class="message">{a.message}</p>}
      <Who a={a} />
      <fieldset disabled={busy || !mayDecide}>
        <legend>Paths asked for</legend>
        <ul class="paths">
          {a.paths.map((p, i) => {
            const host = a.host_paths[i];
            return (
              <li key={p}>
                {/* One path is allowed or denied as a whole: a checkbox would only look like a choice. */}
                {a.paths.length > 1 ? (
                  <label>
                    <input
                      type="checkbox"
                      checked={picked.has(p)}
                      onChange={(e) => toggle(p, e.currentTarget.checked)}
                    />{" "}
                    <span class="mono">{p}</span>
                    {host && host !== p && <span class="muted mono"> ({host})</span>}
                  </label>
                ) : (
                  <>
                    <span class="mono">{p}</span>
                    {host && host !== p && <span class="muted mono"> ({host})</span>}
                  </>
                )}
              </li>
            );
          })}
        </ul>
      </fieldset>
      {a.diff !== null && <DiffText diff={a.diff} truncated={a.diff_truncated} />}
      {mayDecide ? (
        <div class="decide">
          <label class="note">
            Note for the agent (optional)
            <input type="text" value={note} maxLength={2000} onInput={(e) => setNote(e.currentTarget.value)} />
          </label>
          {a.kind !== "consent" && (
            <label class="grant">
              <input type="checkbox" checked={grant} onChange={(e) => setGrant(e.currentTarget.checked)} /> Also allow
              later writes to these paths for the rest of the session
            </label>
          )}
          <div class="buttons">
            <button type="button" disabled={busy} onClick={() => decide("all")}>
              Allow all
            </button>
            {a.paths.length > 1 && (
              <button
                type="button"
                disabled={busy || some.length === 0 || some.length === a.paths.length}
                onClick={() => decide(some)}
              >
                Allow selected ({some.length})
              </button>
            )}
            <button type="button" class="danger" disabled={busy} onClick={() => decide(false)}>
              Deny
            </button>
          </div>
        </div>
      ) : (
        <p class="muted">This session may look but not decide (it needs profile admin-rw).</p>
      )}
      {error && <ErrorNote error={error} />}
    </article>
  );
}

/** A unified diff as text, each line tinted by its sign. */
function DiffText(props: { diff: string; truncated: boolean }) {
  const lines = props.diff.replace(/\n$/, "").split("\n");
  return (
    <figure class="diff">
      <figcaption>Change asked for</figcaption>
      <pre>
        {lines.map((line, i) => (
          <span
            key={i}
            class={
              line.startsWith("+++") || line.startsWith("---")
                ? "file"
                : line.startsWith("+")
                  ? "add"
                  : line.startsWith("-")
                    ? "del"
                    : line.startsWith("@@")
                      ? "hunk"
                      : undefined
            }
          >
            {line}
            {"\n"}
          </span>
        ))}
      </pre>
      {props.truncated && <p class="muted">The diff was cut here (it is too large to show whole).</p>}
    </figure>
  );
}

function Grants(props: { grants: Approval[]; onDone: () => void }) {
  const { can } = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  if (props.grants.length === 0) return <p class="muted">No grants in force.</p>;
  const revoke = (id: string): void => {
    setBusy(id);
    setError(null);
    call("approval_revoke_grant", { id }).then(
      () => {
        setBusy(null);
        props.onDone();
      },
      (e: Error) => {
        setBusy(null);
        setError(e.message);
        props.onDone();
      },
    );
  };
  return (
    <>
      {error && <ErrorNote error={error} />}
      <table class="grants">
        <thead>
          <tr>
            <th scope="col">For</th>
            <th scope="col">Paths</th>
            <th scope="col">Process</th>
            <th scope="col">Allowed</th>
            {can("approval_revoke_grant") && <th scope="col">Revoke</th>}
          </tr>
        </thead>
        <tbody>
          {props.grants.map((g) => (
            <tr key={g.id}>
              <td>
                {g.agent}
                <span class="muted"> · {KIND_LABEL[g.kind]}</span>
              </td>
              <td class="mono">{g.decision?.paths.join("\n")}</td>
              <td>
                {g.process} (pid {g.pid}) on {g.machine}
              </td>
              <td>{g.decision ? `${when(g.decision.at)} by ${g.decision.by}` : ""}</td>
              {can("approval_revoke_grant") && (
                <td>
                  <button
                    type="button"
                    class="danger"
                    disabled={busy === g.id}
                    aria-label={`Revoke the grant for ${g.agent}: ${g.decision?.paths.join(", ") ?? ""}`}
                    onClick={() => revoke(g.id)}
                  >
                    Revoke
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

const OUTCOME_LABEL: Record<Approval["state"], string> = {
  pending: "waiting",
  allowed: "allowed",
  denied: "denied",
  expired: "expired (nobody answered)",
  cancelled: "cancelled by the asker",
};

function Recent(props: { rows: Approval[] }) {
  return (
    <table class="recent">
      <thead>
        <tr>
          <th scope="col">Request</th>
          <th scope="col">For</th>
          <th scope="col">Outcome</th>
          <th scope="col">Note</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr key={r.id}>
            <td>{r.title}</td>
            <td>{r.agent}</td>
            <td>
              {OUTCOME_LABEL[r.state]}
              {r.revoked_at ? ", since revoked" : ""}
              {r.decision && r.decision.by !== "afs" ? ` by ${r.decision.by}` : ""}
            </td>
            <td>{r.decision?.note ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
