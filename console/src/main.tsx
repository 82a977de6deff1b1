// The console's shell: who is signed in, the navigation, and the page the address names.
import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { ApiError, getSession, logout, type Session } from "./api.js";
import { Login } from "./pages/login.js";
import { Link, useLocation } from "./router.js";
import { routeOf } from "./routes.js";
import { SessionContext } from "./session.js";
import "./app.css";

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [problem, setProblem] = useState<ApiError | null>(null);
  const location = useLocation();

  const load = useCallback(() => {
    getSession().then(
      (s) => {
        setSession(s);
        setProblem(null);
      },
      (e: unknown) => setProblem(e instanceof ApiError ? e : new ApiError(0, "IO_ERROR", String(e))),
    );
  }, []);
  useEffect(load, []);

  if (problem?.status === 401) return <Login reason={problem.message} onSignedIn={load} />;
  if (problem)
    return (
      <p class="error" role="alert">
        {problem.message}
      </p>
    );
  if (!session) return <p class="muted">Loading…</p>;

  const { title, view } = routeOf(location);
  document.title = `${title} · afs`;
  const can = (tool: string) => session.tools.includes(tool);
  return (
    <SessionContext.Provider value={session}>
      <header class="top">
        <Link href="/" class="brand">
          afs
        </Link>
        <nav aria-label="Main">
          <Link href="/">Workspaces</Link>
          {can("workspace_activity") && <Link href="/activity">Activity</Link>}
          {can("mcp_token_issue") && <Link href="/tokens">Tokens</Link>}
          {can("approval_list") && <Link href="/approvals">Approvals</Link>}
        </nav>
        <span class="who" title={`profile ${session.profile}`}>
          {session.actor ?? "local"} · {session.profile}
          {session.pinned && session.workspace ? ` · ${session.workspace}` : ""}
        </span>
        {session.auth === "token" && (
          <button type="button" onClick={() => void logout().then(load)}>
            Sign out
          </button>
        )}
      </header>
      <main id="main">{view}</main>
    </SessionContext.Provider>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
