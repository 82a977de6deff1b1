// `/`: the workspaces — name, description, template, changed or clean, last activity, mounts — and
// create, fork and delete, each through its tool and offered only when the session may call it.
import { useState } from "preact/hooks";
import { call } from "../api.js";
import { ErrorNote, Loading } from "../components.js";
import { useCall } from "../hooks.js";
import { Link, seg } from "../router.js";
import { useSession } from "../session.js";
import { ago, exact } from "./ws-format.js";
import "./workspaces.css";

interface LastEvent {
  seq: number;
  op: string;
  path: string;
  actor: string;
  surface: string;
  time: string;
}

interface Mount {
  dir: string;
  state: string;
  readonly: boolean;
  pending: number;
  conflicts: number;
  last_sync: string | null;
  last_error: string | null;
}

interface WorkspaceRow {
  name: string;
  description: string;
  dirty: boolean;
  template: string | null;
  last_event: LastEvent | null;
  mounts: Mount[];
}

interface Listing {
  workspaces: WorkspaceRow[];
  machine: string;
}

type Action = { kind: "create" } | { kind: "fork"; source: string } | { kind: "delete"; name: string };

export function Workspaces() {
  const session = useSession();
  const [action, setAction] = useState<Action | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const listed = useCall<Listing>(session.can("workspace_list") ? "workspace_list" : null);

  // A session bound to one workspace (a workspace token) lists nothing else: it sees its own.
  if (!session.can("workspace_list")) {
    return (
      <section>
        <h1>Workspaces</h1>
        {session.workspace ? (
          <ul>
            <li>
              <Link href={`/ws/${seg(session.workspace)}`}>{session.workspace}</Link>
            </li>
          </ul>
        ) : (
          <p class="muted">This session may not list workspaces.</p>
        )}
      </section>
    );
  }
  if (listed.error) return <ErrorNote error={listed.error} />;
  if (!listed.data) return <Loading what="workspaces" />;
  const { workspaces, machine } = listed.data;
  const finish = (message: string) => {
    setAction(null);
    setDone(message);
    listed.reload();
  };
  const templates = workspaces.flatMap((w) => (w.template ? [w.template] : []));

  return (
    <section>
      <div class="ws-head">
        <h1>Workspaces</h1>
        {session.can("workspace_create") && (
          <button type="button" onClick={() => setAction({ kind: "create" })}>
            New workspace
          </button>
        )}
      </div>
      {done && (
        <p class="ws-done" role="status">
          {done}
        </p>
      )}
      {action?.kind === "create" && (
        <CreateForm templates={templates} onDone={finish} onCancel={() => setAction(null)} />
      )}
      {action?.kind === "fork" && <ForkForm source={action.source} onDone={finish} onCancel={() => setAction(null)} />}
      {action?.kind === "delete" && <DeleteForm name={action.name} onDone={finish} onCancel={() => setAction(null)} />}
      {workspaces.length === 0 ? (
        <p class="muted">No workspaces yet.</p>
      ) : (
        <div class="ws-scroll">
          <table class="ws-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Template</th>
                <th scope="col">State</th>
                <th scope="col">Last activity</th>
                <th scope="col">Mounts on {machine}</th>
                {(session.can("workspace_fork") || session.can("workspace_delete")) && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {workspaces.map((w) => (
                <tr key={w.name}>
                  <td>
                    <Link href={`/ws/${seg(w.name)}`}>{w.name}</Link>
                  </td>
                  <td>{w.description}</td>
                  <td>{w.template ? <code>{w.template}</code> : <span class="muted">—</span>}</td>
                  <td>
                    <span class={w.dirty ? "ws-changed" : "ws-clean"}>{w.dirty ? "changed" : "clean"}</span>
                  </td>
                  <td>
                    {w.last_event ? (
                      <span title={`${exact(w.last_event.time)} · ${w.last_event.op} ${w.last_event.path}`}>
                        {ago(w.last_event.time)} by {w.last_event.actor}
                        <span class="muted"> ({w.last_event.surface})</span>
                      </span>
                    ) : (
                      <span class="muted">none</span>
                    )}
                  </td>
                  <td>
                    {w.mounts.length === 0 ? (
                      <span class="muted">none</span>
                    ) : (
                      <ul class="ws-mounts">
                        {w.mounts.map((m) => (
                          <li key={m.dir} title={m.last_error ?? undefined}>
                            <code>{m.dir}</code> {m.state}
                            {m.readonly ? ", read-only" : ""}
                            {m.pending > 0 ? `, ${m.pending} pending` : ""}
                            {m.conflicts > 0 ? `, ${m.conflicts} conflicts` : ""}
                          </li>
                        ))}
                      </ul>
                    )}
                  </td>
                  {(session.can("workspace_fork") || session.can("workspace_delete")) && (
                    <td class="ws-actions">
                      {session.can("workspace_fork") && (
                        <button
                          type="button"
                          aria-label={`Fork ${w.name}`}
                          onClick={() => setAction({ kind: "fork", source: w.name })}
                        >
                          Fork
                        </button>
                      )}
                      {session.can("workspace_delete") && (
                        <button
                          type="button"
                          class="danger"
                          aria-label={`Delete ${w.name}`}
                          onClick={() => setAction({ kind: "delete", name: w.name })}
                        >
                          Delete
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted ws-note">
        Mounts are those of the machine serving this page ({machine}); other machines keep their own.
      </p>
    </section>
  );
}

interface FormProps {
  onDone(message: string): void;
  onCancel(): void;
}

/** A form that calls one tool; its error stays on the form as text. */
function useSubmit(run: () => Promise<string>, onDone: (m: string) => void) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onDone(await run());
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };
  return { error, busy, submit };
}

function CreateForm(props: FormProps & { templates: string[] }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [template, setTemplate] = useState("");
  const { error, busy, submit } = useSubmit(async () => {
    await call("workspace_create", {
      name,
      ...(description ? { description } : {}),
      ...(template ? { template_slug: template } : {}),
    });
    return `Created workspace ${name}.`;
  }, props.onDone);
  return (
    <form class="ws-form" aria-label="New workspace" onSubmit={submit}>
      <h2>New workspace</h2>
      <label for="ws-name">Name</label>
      <input id="ws-name" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
      <label for="ws-description">Description</label>
      <input id="ws-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <label for="ws-template">Template</label>
      <select id="ws-template" value={template} onChange={(e) => setTemplate(e.currentTarget.value)}>
        <option value="">none (empty)</option>
        {props.templates.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <FormButtons busy={busy} label="Create" onCancel={props.onCancel} />
      {error && <ErrorNote error={error} />}
    </form>
  );
}

function ForkForm(props: FormProps & { source: string }) {
  const session = useSession();
  const [name, setName] = useState("");
  const [checkpoint, setCheckpoint] = useState("");
  const cps = useCall<{ checkpoints: { name: string; created_at: string }[] }>(
    session.can("checkpoint_list") ? "checkpoint_list" : null,
    { workspace: props.source },
  );
  const { error, busy, submit } = useSubmit(async () => {
    await call("workspace_fork", {
      source: props.source,
      name,
      ...(checkpoint ? { checkpoint } : {}),
    });
    return `Forked ${props.source}${checkpoint ? ` at ${checkpoint}` : ""} into ${name}.`;
  }, props.onDone);
  return (
    <form class="ws-form" aria-label={`Fork ${props.source}`} onSubmit={submit}>
      <h2>Fork {props.source}</h2>
      <label for="fork-name">New workspace name</label>
      <input id="fork-name" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
      <label for="fork-from">Start from</label>
      <select id="fork-from" value={checkpoint} onChange={(e) => setCheckpoint(e.currentTarget.value)}>
        <option value="">live state</option>
        {(cps.data?.checkpoints ?? []).map((c) => (
          <option key={c.name} value={c.name}>
            checkpoint {c.name}
          </option>
        ))}
      </select>
      <FormButtons busy={busy} label="Fork" onCancel={props.onCancel} />
      {error && <ErrorNote error={error} />}
    </form>
  );
}

function DeleteForm(props: FormProps & { name: string }) {
  const [typed, setTyped] = useState("");
  const { error, busy, submit } = useSubmit(async () => {
    await call("workspace_delete", { workspace: props.name });
    return `Deleted workspace ${props.name}.`;
  }, props.onDone);
  return (
    <form class="ws-form ws-delete" aria-label={`Delete ${props.name}`} onSubmit={submit}>
      <h2>Delete {props.name}</h2>
      <p>
        This deletes the workspace with all its checkpoints and cannot be undone. Type its name,{" "}
        <code>{props.name}</code>, to confirm.
      </p>
      <label for="delete-confirm">Workspace name</label>
      <input id="delete-confirm" value={typed} autocomplete="off" onInput={(e) => setTyped(e.currentTarget.value)} />
      <div class="ws-buttons">
        <button type="submit" class="danger" disabled={busy || typed !== props.name}>
          Delete for good
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
      {error && <ErrorNote error={error} />}
    </form>
  );
}

function FormButtons(props: { busy: boolean; label: string; onCancel(): void }) {
  return (
    <div class="ws-buttons">
      <button type="submit" disabled={props.busy}>
        {props.label}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}
