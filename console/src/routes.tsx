// Every page and the path that names it. A page module owns one path pattern; the shell renders
// whatever this table says for the current address.
import type { JSX } from "preact";
import { Approvals } from "./pages/approvals.js";
import { NotFound } from "./pages/not-found.js";
import { Workspaces } from "./pages/workspaces.js";
import type { Location } from "./router.js";

export interface Route {
  title: string;
  view: JSX.Element;
}

type Matcher = (parts: string[], location: Location) => Route | null;

const ROUTES: Matcher[] = [
  (parts) => (parts.length === 0 ? { title: "Workspaces", view: <Workspaces /> } : null),
  (parts) => (parts.length === 1 && parts[0] === "approvals" ? { title: "Approvals", view: <Approvals /> } : null),
];

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
