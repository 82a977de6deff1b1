// `/ws/NAME/checkpoints`: the timeline, creating a checkpoint, picking two points to compare, and
// a restore that first shows exactly what it will change (checkpoint_diff from live to the target)
// and can be undone right after (by restoring the safety checkpoint it made, or the old head).
import { useState } from "preact/hooks";
import { ApiError, call } from "../api.js";
import { ErrorNote, Loading, WorkspacePage } from "../components.js";
import { useCall } from "../hooks.js";
import { Link, navigate } from "../router.js";
import { useSession } from "../session.js";
import { type CheckpointList, type CheckpointRow, DiffBody, diffHref, LIVE, NotAllowed } from "./diff.js";
import "./checkpoints.css";

interface Restored {
  checkpoint: string;
  safety_checkpoint: string | null;
}

/** What the last restore did, so it can be undone. */
interface LastRestore {
  target: string;
  safety: string | null;
  /** The head before the restore: the live state then, when it had no changes of its own. */
  before: string;
}

const message = (e: unknown): string => (e instanceof ApiError || e instanceof Error ? e.message : String(e));

function CreateForm(props: { workspace: string; onCreated: (note: string) => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const args: Record<string, unknown> = { workspace: props.workspace, description };
      if (name.trim() !== "") args.checkpoint = name.trim();
      const r = await call<{ checkpoint: string; created: boolean }>("checkpoint_create", args);
      setName("");
      setDescription("");
      props.onCreated(
        r.created ? `Created checkpoint ${r.checkpoint}.` : `Nothing to save: the live state is ${r.checkpoint}.`,
      );
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="create-checkpoint" onSubmit={submit}>
      <label>
        Name <input value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="generated" />
      </label>
      <label>
        Description <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Create checkpoint
      </button>
      {error && <ErrorNote error={error} />}
    </form>
  );
}

function RestorePreview(props: {
  workspace: string;
  target: string;
  list: CheckpointList;
  onCancel: () => void;
  onRestored: (r: LastRestore) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const restore = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await call<Restored>("checkpoint_restore", { workspace: props.workspace, checkpoint: props.target });
      props.onRestored({ target: r.checkpoint, safety: r.safety_checkpoint, before: props.list.head });
    } catch (err) {
      setError(message(err));
      setBusy(false);
    }
  };
  return (
    <section class="restore-preview" aria-label={`Restore ${props.target}`}>
      <h2>
        Restore <span class="mono">{props.target}</span>?
      </h2>
      <p>
        {props.list.dirty
          ? "The live state has changes no checkpoint holds: they are saved first as a safety checkpoint (named safety-…), which Undo restores."
          : `The live state has no changes since ${props.list.head}: no safety checkpoint is needed; Undo restores ${props.list.head}.`}
      </p>
      <p>These are the changes the restore makes to the live state:</p>
      <div class="restore-actions">
        <button type="button" class="danger" disabled={busy} onClick={() => void restore()}>
          Restore {props.target}
        </button>
        <button type="button" onClick={props.onCancel} disabled={busy}>
          Cancel
        </button>
        <Link href={diffHref(props.workspace, LIVE, props.target)}>Open as a diff page</Link>
      </div>
      {error && <ErrorNote error={error} />}
      <DiffBody workspace={props.workspace} from={LIVE} to={props.target} mode="unified" />
    </section>
  );
}

function Timeline(props: {
  workspace: string;
  canDiff: boolean;
  list: CheckpointList;
  selected: string[];
  onSelect: ((name: string) => void) | null;
  onRestore: ((name: string) => void) | null;
}) {
  const { list } = props;
  const onSelect = props.onSelect;
  const pick = (name: string, label: string) =>
    onSelect && (
      <input
        type="checkbox"
        aria-label={`Compare ${label}`}
        checked={props.selected.includes(name)}
        onChange={() => onSelect(name)}
      />
    );
  return (
    <table class="timeline">
      <thead>
        <tr>
          {onSelect && <th scope="col">Compare</th>}
          <th scope="col">Name</th>
          <th scope="col">Kind</th>
          <th scope="col">Actor</th>
          <th scope="col">Time</th>
          <th scope="col">Description</th>
          <th scope="col">Changes</th>
          {props.onRestore && <th scope="col">Restore</th>}
        </tr>
      </thead>
      <tbody>
        <tr class="live-row">
          {onSelect && <td>{pick(LIVE, "live")}</td>}
          <td>
            <strong>live</strong>
          </td>
          <td colSpan={4} class="muted">
            {list.dirty ? `changed since ${list.head}` : `same as ${list.head}`}
          </td>
          <td />
          {props.onRestore && <td />}
        </tr>
        {list.checkpoints.map((c: CheckpointRow) => (
          <tr key={c.name}>
            {onSelect && <td>{pick(c.name, c.name)}</td>}
            <td class="mono">
              {c.name}
              {c.name === list.head && <span class="badge head">head</span>}
            </td>
            <td>{c.kind}</td>
            <td>{c.actor}</td>
            <td>
              <time dateTime={c.created_at} title={c.created_at}>
                {new Date(c.created_at).toLocaleString()}
              </time>
            </td>
            <td class="desc">{c.description}</td>
            <td>
              {c.parent !== null && props.canDiff ? (
                <Link href={diffHref(props.workspace, c.parent, c.name)} title={`Changes from ${c.parent}`}>
                  {String(c.changes ?? "changes")}
                </Link>
              ) : (
                (c.changes ?? "")
              )}
            </td>
            {props.onRestore && (
              <td>
                <button type="button" onClick={() => props.onRestore?.(c.name)} aria-label={`Restore ${c.name}…`}>
                  Restore…
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CheckpointsPage(props: { workspace: string }) {
  const session = useSession();
  const readable = session.can("checkpoint_list");
  const list = useCall<CheckpointList>(readable ? "checkpoint_list" : null, {
    workspace: props.workspace,
    count_changes: true,
  });
  const [selected, setSelected] = useState<string[]>([]);
  const [preview, setPreview] = useState<string | null>(null);
  const [last, setLast] = useState<LastRestore | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // Newest first, live on top: of two picked points the lower one is older, the diff's base.
  const order = [LIVE, ...(list.data?.checkpoints.map((c) => c.name) ?? [])];
  const select = (name: string) =>
    setSelected((s) => (s.includes(name) ? s.filter((n) => n !== name) : [...s, name].slice(-2)));
  const compare = () => {
    const [a, b] = [...selected].sort((x, y) => order.indexOf(y) - order.indexOf(x));
    if (a !== undefined && b !== undefined) navigate(diffHref(props.workspace, a, b));
  };
  const undo = async (r: LastRestore) => {
    setBusy(true);
    setError(null);
    try {
      const back = r.safety ?? r.before;
      await call<Restored>("checkpoint_restore", { workspace: props.workspace, checkpoint: back });
      setLast(null);
      setNote(`Undone: the live state is ${back} again.`);
      list.reload();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  };

  if (!readable) {
    return (
      <WorkspacePage workspace={props.workspace} tab="checkpoints">
        <NotAllowed profile={session.profile} what="read checkpoints" />
      </WorkspacePage>
    );
  }
  return (
    <WorkspacePage workspace={props.workspace} tab="checkpoints">
      {session.can("checkpoint_create") && (
        <CreateForm
          workspace={props.workspace}
          onCreated={(n) => {
            setNote(n);
            list.reload();
          }}
        />
      )}
      {note && (
        <p class="note" role="status">
          {note}
        </p>
      )}
      {last && (
        <div class="note" role="status">
          <p>
            Restored {last.target}.{" "}
            {last.safety
              ? `The live changes it replaced are saved as checkpoint ${last.safety}.`
              : "The live state had no changes of its own, so no safety checkpoint was needed."}
          </p>
          <button type="button" disabled={busy} onClick={() => void undo(last)}>
            Undo restore
          </button>
        </div>
      )}
      {error && <ErrorNote error={error} />}
      {list.error && <ErrorNote error={list.error} />}
      {!list.data && !list.error && <Loading what="the checkpoints" />}
      {list.data && preview && (
        <RestorePreview
          workspace={props.workspace}
          target={preview}
          list={list.data}
          onCancel={() => setPreview(null)}
          onRestored={(r) => {
            setPreview(null);
            setNote(null);
            setLast(r);
            list.reload();
          }}
        />
      )}
      {list.data && (
        <>
          {session.can("checkpoint_diff") && (
            <div class="compare-bar">
              <button type="button" disabled={selected.length !== 2} onClick={compare}>
                Compare selected
              </button>
              <span class="muted">
                {selected.length === 2 ? selected.join(" and ") : "Pick two points (live is one) to compare."}
              </span>
            </div>
          )}
          <Timeline
            workspace={props.workspace}
            canDiff={session.can("checkpoint_diff")}
            list={list.data}
            selected={selected}
            onSelect={session.can("checkpoint_diff") ? select : null}
            onRestore={
              session.can("checkpoint_restore")
                ? (name) => {
                    setLast(null);
                    setNote(null);
                    setPreview(name);
                  }
                : null
            }
          />
        </>
      )}
    </WorkspacePage>
  );
}
