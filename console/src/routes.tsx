// Every page and the path that names it. A page module owns one path pattern; the shell renders
// whatever this table says for the current address.
import type { JSX } from "preact";
import { Activity } from "./pages/activity.js";
import { Approvals } from "./pages/approvals.js";
import { checkpointsRoute, diffRoute, historyRoute } from "./pages/cps-routes.js";
import { Files } from "./pages/files.js";
import { NotFound } from "./pages/not-found.js";
import { Search } from "./pages/search.js";
import { Tokens } from "./pages/tokens.js";
import { Workspaces } from "./pages/workspaces.js";
import type { Location } from "./router.js";

export interface Route {
  title: string;
  view: JSX.Element;
}

export type Matcher = (parts: string[], location: Location) => Route | null;

const ROUTES: Matcher[] = [
  (parts) => (parts.length === 0 ? { title: "Workspaces", view: <Workspaces /> } : null),
  (p, l) =>
    p.length === 1 && p[0] === "activity"
      ? { title: "Activity", view: <Activity workspace={null} location={l} /> }
      : null,
  (p, l) =>
    p.length === 3 && p[0] === "ws" && p[2] === "activity"
      ? { title: `Activity · ${p[1]}`, view: <Activity key={p[1]} workspace={p[1] as string} location={l} /> }
      : null,
  (p, l) =>
    p.length === 3 && p[0] === "ws" && p[2] === "search"
      ? { title: `Search · ${p[1]}`, view: <Search key={p[1]} workspace={p[1] as string} location={l} /> }
      : null,
  (p) => (p.length === 1 && p[0] === "tokens" ? { title: "Tokens", view: <Tokens /> } : null),
  (parts) => (parts.length === 1 && parts[0] === "approvals" ? { title: "Approvals", view: <Approvals /> } : null),
  checkpointsRoute,
  diffRoute,
  historyRoute,
  (parts, { query }) =>
    parts[0] === "ws" && parts[1] !== undefined && (parts.length === 2 || parts[2] === "files")
      ? filesRoute(parts[1], `/${parts.slice(3).join("/")}`, query)
      : null,
];

function filesRoute(workspace: string, path: string, query: URLSearchParams): Route {
  const at = query.get("at") || null;
  // ?line=N, or #LN / #LN-LM as search results and shared links put it (GitHub's form).
  const hashed = /^#L(\d+)/.exec(window.location.hash)?.[1];
  const line = Number.parseInt(query.get("line") ?? hashed ?? "", 10);
  return {
    title: `${path === "/" ? workspace : path}${at ? ` at ${at}` : ""}`,
    view: (
      <Files
        key={`${workspace}\n${path}\n${at}`}
        workspace={workspace}
        path={path}
        at={at}
        line={line >= 1 ? line : null}
      />
    ),
  };
}

export function routeOf(location: Location): Route {
  const parts = location.path
    .split("/")
    .filter((p) => p !== "")
    .map((p) => decodeURIComponent(p));
  for (const match of ROUTES) {
    const route = match(parts, location);
    if (route) return route;
  }
  return { title: "Not found", view: <NotFound path={location.path} /> };
}
