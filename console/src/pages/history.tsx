// `/ws/NAME/history/PATH`: a file's versions (file_history), the diff between any two of them or
// one and the live file (file_diff_versions), one version's text (file_read_version), and bringing
// one back (file_restore_version) or the deleted file (file_undelete).
import { useState } from "preact/hooks";
import { ApiError, call } from "../api.js";
import { ErrorNote, Loading, WorkspacePage } from "../components.js";
import { useCall } from "../hooks.js";
import { navigate, pathSegs, seg } from "../router.js";
import { useSession } from "../session.js";
import { type DiffMode, ModeSwitch, PatchView } from "./diff-view.js";
import "./checkpoints.css";

interface Version {
  version_id: string | null;
  seq: number | null;
  time: string | null;
  actor: string | null;
  surface: string | null;
  op: string;
  path: string;
  size: number | null;
  available: boolean;
  checkpoints: string[];
}

interface HistoryPage {
  versions: Version[];
  next_cursor: string | null;
}

interface VersionText {
  version: string;
  size: number;
  content?: string;
  content_base64?: string;
}

interface VersionDiff {
  from: string;
  to: string;
  patch: string;
  binary: boolean;
}

const message = (e: unknown): string => (e instanceof ApiError || e instanceof Error ? e.message : String(e));

export function HistoryPage(props: { workspace: string; path: string; query: URLSearchParams }) {
  const session = useSession();
  const { workspace, path } = props;
  const mode: DiffMode = props.query.get("view") === "split" ? "split" : "unified";
  const history = useCall<HistoryPage>("file_history", { workspace, path, limit: 100 });
  const [older, setOlder] = useState<Version[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  // Picked rows by index in the list (one content can come back at several times); -1 is live.
  const [picked, setPicked] = useState<number[]>([]);
  const [diff, setDiff] = useState<VersionDiff | null>(null);
  const [shown, setShown] = useState<VersionText | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const versions = [...(history.data?.versions ?? []), ...older];
  const next = cursor === undefined ? (history.data?.next_cursor ?? null) : cursor;
  const deleted = versions[0] !== undefined && versions[0].version_id === null;

  const act = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
    } catch (e) {
      setError(message(e));
    } finally {
      setBusy(false);
    }
  };
  const reload = () => {
    setOlder([]);
    setCursor(undefined);
    setPicked([]);
    history.reload();
  };
  const more = () =>
    act(async () => {
      const page = await call<HistoryPage>("file_history", { workspace, path, limit: 100, cursor: next });
      setOlder((o) => [...o, ...page.versions]);
      setCursor(page.next_cursor);
    });
  const pick = (i: number) => setPicked((p) => (p.includes(i) ? p.filter((x) => x !== i) : [...p, i].slice(-2)));
  const compare = () =>
    act(async () => {
      // Newest first: the larger index is older and is the diff's base; live (-1) is newest.
      const [a, b] = [...picked].sort((x, y) => y - x);
      const from = versions[a as number]?.version_id;
      const to = b === -1 ? undefined : versions[b as number]?.version_id;
      if (!from) return;
      setDiff(await call<VersionDiff>("file_diff_versions", { workspace, path, from, ...(to ? { to } : {}) }));
    });
  const view = (v: Version) =>
    act(async () => {
      setShown(await call<VersionText>("file_read_version", { workspace, path, version: v.version_id }));
    });
  const restore = (v: Version) =>
    act(async () => {
      const r = await call<{ from: string }>("file_restore_version", { workspace, path, version: v.version_id });
      setNote(`Restored ${path} from ${r.from}.`);
      reload();
    });
  const undelete = () =>
    act(async () => {
      const r = await call<{ from: string }>("file_undelete", { workspace, path });
      setNote(`Undeleted ${path} from ${r.from}.`);
      reload();
    });
  const setMode = (m: DiffMode) => {
    const q = new URLSearchParams(props.query);
    if (m === "split") q.set("view", "split");
    else q.delete("view");
    const qs = q.toString();
    navigate(`/ws/${seg(workspace)}/history${pathSegs(path)}${qs ? `?${qs}` : ""}`, true);
  };
  const selectable = (i: number, label: string) => (
    <input type="checkbox" aria-label={`Compare ${label}`} checked={picked.includes(i)} onChange={() => pick(i)} />
  );

  return (
    <WorkspacePage workspace={workspace} tab={null}>
      <h2>
        History of <span class="mono">{path}</span>
      </h2>
      {note && (
        <p class="note" role="status">
          {note}
        </p>
      )}
      {error && <ErrorNote error={error} />}
      {deleted && (
        <p class="note">
          This file is deleted.{" "}
          {session.can("file_undelete") && (
            <button type="button" disabled={busy} onClick={() => void undelete()}>
              Undelete
            </button>
          )}
        </p>
      )}
      {history.error && <ErrorNote error={history.error} />}
      {!history.data && !history.error && <Loading what="the versions" />}
      {history.data && versions.length === 0 && <p class="muted">No recorded history for this path.</p>}
      {versions.length > 0 && (
        <>
          <div class="compare-bar">
            <button type="button" disabled={picked.length !== 2 || busy} onClick={() => void compare()}>
              Compare selected
            </button>
            <span class="muted">Pick two versions (or one and live).</span>
          </div>
          <table class="versions">
            <thead>
              <tr>
                <th scope="col">Compare</th>
                <th scope="col">Version</th>
                <th scope="col">Time</th>
                <th scope="col">Who</th>
                <th scope="col">Change</th>
                <th scope="col">Size</th>
                <th scope="col">Checkpoints</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {!deleted && (
                <tr class="live-row">
                  <td>{selectable(-1, "live")}</td>
                  <td colSpan={7}>
                    <strong>live</strong>
                  </td>
                </tr>
              )}
              {versions.map((v, i) => {
                const usable = v.version_id !== null && v.available;
                return (
                  <tr key={`${i}:${v.seq}`}>
                    <td>{usable && selectable(i, v.version_id as string)}</td>
                    <td class="mono">{v.version_id ?? "(deleted)"}</td>
                    <td>
                      {v.time && (
                        <time dateTime={v.time} title={v.time}>
                          {new Date(v.time).toLocaleString()}
                        </time>
                      )}
                    </td>
                    <td>
                      {v.actor ?? ""}
                      {v.surface ? ` · ${v.surface}` : ""}
                    </td>
                    <td class="path">
                      {v.op}
                      {v.path !== path && <span class="mono small"> at {v.path}</span>}
                    </td>
                    <td>{v.size ?? ""}</td>
                    <td>{v.checkpoints.join(", ")}</td>
                    <td class="actions">
                      {usable && (
                        <button
                          type="button"
                          disabled={busy}
                          onClick={() => void view(v)}
                          aria-label={`View ${v.version_id}`}
                        >
                          View
                        </button>
                      )}
                      {usable && i > 0 && session.can("file_restore_version") && (
                        <button
                          type="button"
                          disabled={busy}
                          onClick={() => void restore(v)}
                          aria-label={`Restore ${v.version_id}`}
                        >
                          Restore
                        </button>
                      )}
                      {!v.available && <span class="muted">collected</span>}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {next && (
            <button type="button" disabled={busy} onClick={() => void more()}>
              Older versions
            </button>
          )}
        </>
      )}
      {diff && (
        <section class="version-diff" aria-label="Version diff">
          <h3>
            <span class="mono">{diff.from}</span> → <span class="mono">{diff.to}</span>
          </h3>
          <ModeSwitch mode={mode} onChange={setMode} />
          {diff.binary ? (
            <p class="muted">Binary content differs.</p>
          ) : diff.patch === "" ? (
            <p>No differences.</p>
          ) : (
            <PatchView patch={diff.patch} mode={mode} label={path} />
          )}
        </section>
      )}
      {shown && (
        <section class="version-text" aria-label={`Version ${shown.version}`}>
          <h3>
            <span class="mono">{shown.version}</span> ({shown.size} bytes)
          </h3>
          {shown.content !== undefined ? (
            <pre class="file-text">{shown.content}</pre>
          ) : (
            <p class="muted">Binary content, {shown.size} bytes.</p>
          )}
        </section>
      )}
    </WorkspacePage>
  );
}
