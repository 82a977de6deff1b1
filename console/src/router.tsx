// Pages are addressed by path (deep links people can share); moving between them changes the
// history without a reload. A link is an ordinary <a href>, so it opens in a new tab as well.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

export interface Location {
  path: string;
  query: URLSearchParams;
}

const here = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });

const listeners = new Set<() => void>();
window.addEventListener("popstate", () => {
  for (const l of listeners) l();
});

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
  window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [location, setLocation] = useState(here);
  useEffect(() => {
    const update = () => setLocation(here());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/** A same-app link: plain clicks navigate in place, modified clicks do what the browser does. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; title?: string }) {
  const onClick = (e: MouseEvent) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} title={props.title} onClick={onClick}>
      {props.children}
    </a>
  );
}

/** A path segment for a URL: workspace and file names are data, never URL syntax. */
export const seg = (s: string): string => encodeURIComponent(s);
/** A workspace path (/a/b c) for a URL path, keeping its slashes. */
export const pathSegs = (p: string): string => p.split("/").map(encodeURIComponent).join("/");
