// `/`: the workspaces.
import { useEffect, useState } from "preact/hooks";
import { call } from "../api.js";
import { Link, seg } from "../router.js";

interface WorkspaceRow {
  name: string;
  description: string;
  head: string;
  dirty: boolean;
  template_slug?: string | null;
}

export function Workspaces() {
  const [rows, setRows] = useState<WorkspaceRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    call<{ workspaces: WorkspaceRow[] }>("workspace_list").then(
      (r) => setRows(r.workspaces),
      (e: Error) => setError(e.message),
    );
  }, []);
  if (error)
    return (
      <p class="error" role="alert">
        {error}
      </p>
    );
  if (!rows) return <p class="muted">Loading workspaces…</p>;
  return (
    <section>
      <h1>Workspaces</h1>
      {rows.length === 0 ? (
        <p class="muted">No workspaces yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Description</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((w) => (
              <tr key={w.name}>
                <td>
                  <Link href={`/ws/${seg(w.name)}`}>{w.name}</Link>
                </td>
                <td>{w.description}</td>
                <td>{w.dirty ? "changed" : "clean"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
