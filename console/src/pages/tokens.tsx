// `/tokens`: issue a workspace token (its secret shown once, with a copy button), list the tokens
// (mcp_token_list never returns secrets) and revoke one. Admin profiles with the token tools only;
// the page says so to any other session.
import { useState } from "preact/hooks";
import { call } from "../api.js";
import { ErrorNote, Loading } from "../components.js";
import { useCall } from "../hooks.js";
import { useSession } from "../session.js";
import "./live.css";

interface TokenRow {
  token_id: string;
  name: string;
  scope: "workspace" | "control-plane";
  workspace: string | null;
  profile: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: "active" | "expired" | "revoked";
}

interface Issued {
  token_id: string;
  token: string;
  workspace: string;
  profile: string;
  name: string;
  expires_at: string | null;
}

const PROFILES = ["workspace-rw", "workspace-ro", "workspace-rw-checkpoint"];

const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "short" });
const when = (iso: string | null): string => (iso === null ? "—" : TIME.format(new Date(iso)));

export function Tokens() {
  const session = useSession();
  if (!session.can("mcp_token_list")) {
    return (
      <section>
        <h1>Tokens</h1>
        <ErrorNote error={`Managing tokens needs an admin-rw session; this one has profile ${session.profile}.`} />
      </section>
    );
  }
  return <TokenAdmin />;
}

function TokenAdmin() {
  const list = useCall<{ tokens: TokenRow[] }>("mcp_token_list");
  const workspaces = useCall<{ workspaces: { name: string }[] }>("workspace_list");
  const [issued, setIssued] = useState<Issued | null>(null);
  return (
    <section class="tokens">
      <h1>Tokens</h1>
      <IssueForm
        workspaces={workspaces.data?.workspaces.map((w) => w.name) ?? []}
        onIssued={(t) => {
          setIssued(t);
          list.reload();
        }}
      />
      {issued && <Secret issued={issued} onDone={() => setIssued(null)} />}
      <h2>Issued tokens</h2>
      {list.error && <ErrorNote error={list.error} />}
      {!list.data ? (
        <Loading what="tokens" />
      ) : list.data.tokens.length === 0 ? (
        <p class="muted">No tokens yet.</p>
      ) : (
        <div class="scroll">
          <table class="token-list">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Workspace</th>
                <th scope="col">Profile</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.tokens.map((t) => (
                <TokenLine key={t.token_id} token={t} onRevoked={list.reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function IssueForm(props: { workspaces: string[]; onIssued: (t: Issued) => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const args: Record<string, unknown> = {
      workspace: String(data.get("workspace") ?? ""),
      profile: String(data.get("profile") ?? "workspace-rw"),
    };
    const name = String(data.get("name") ?? "").trim();
    if (name) args.name = name;
    const expires = String(data.get("expires") ?? "");
    if (expires) args.expires_at = new Date(expires).toISOString();
    setBusy(true);
    try {
      props.onIssued(await call<Issued>("mcp_token_issue", args));
      setError(null);
      form.reset();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="issue" aria-label="Issue a token" onSubmit={submit}>
      <h2>Issue a token</h2>
      <div class="row">
        <label for="issue-workspace">
          Workspace
          <select id="issue-workspace" name="workspace" aria-label="Workspace" required>
            {props.workspaces.map((w) => (
              <option key={w} value={w}>
                {w}
              </option>
            ))}
          </select>
        </label>
        <label for="issue-profile">
          Profile
          <select id="issue-profile" name="profile" aria-label="Profile">
            {PROFILES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Name <input name="name" placeholder="the agent it is for" />
        </label>
        <label>
          Expires <input name="expires" type="datetime-local" />
        </label>
        <button type="submit" disabled={busy || props.workspaces.length === 0}>
          Issue
        </button>
      </div>
      {error && <ErrorNote error={error} />}
    </form>
  );
}

/** The new secret, once: afs keeps only its hash. */
function Secret(props: { issued: Issued; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.issued.token);
      setCopied("Copied.");
    } catch {
      // No clipboard (a page not on https or localhost): select it for the person to copy.
      (document.getElementById("new-secret") as HTMLInputElement | null)?.select();
      setCopied("Select and copy it by hand: the clipboard is not available here.");
    }
  };
  return (
    <div class="secret" role="status">
      <p>
        Token <strong>{props.issued.name}</strong> ({props.issued.profile} on {props.issued.workspace}). Copy the secret
        now: it is shown only this once.
      </p>
      <div class="row">
        <label class="grow">
          Secret <input id="new-secret" class="mono" readOnly value={props.issued.token} />
        </label>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={props.onDone}>
          Done
        </button>
      </div>
      {copied && <p class="muted">{copied}</p>}
    </div>
  );
}

function TokenLine(props: { token: TokenRow; onRevoked: () => void }) {
  const t = props.token;
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const revoke = async () => {
    try {
      await call("mcp_token_revoke", { token_id: t.token_id });
      setConfirming(false);
      props.onRevoked();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return (
    <tr data-token={t.token_id}>
      <td class="name">{t.name}</td>
      <td class="mono">{t.token_id}</td>
      <td>{t.workspace ?? "(control plane)"}</td>
      <td>{t.profile}</td>
      <td>{when(t.created_at)}</td>
      <td>{when(t.expires_at)}</td>
      <td>
        <span class={`status ${t.status}`}>{t.status}</span>
      </td>
      <td>
        {t.status === "active" &&
          (confirming ? (
            <span class="confirm">
              <button type="button" class="danger" onClick={() => void revoke()}>
                Revoke {t.name} now
              </button>
              <button type="button" onClick={() => setConfirming(false)}>
                Keep
              </button>
            </span>
          ) : (
            <button type="button" class="danger" onClick={() => setConfirming(true)} aria-label={`Revoke ${t.name}`}>
              Revoke
            </button>
          ))}
        {error && <ErrorNote error={error} />}
      </td>
    </tr>
  );
}
