// Small pieces every page uses. Everything they show is text: agents wrote it.
import type { ComponentChildren } from "preact";
import { Link, seg } from "./router.js";

export const Loading = (props: { what: string }) => <p class="muted">Loading {props.what}…</p>;

export const ErrorNote = (props: { error: string }) => (
  <p class="error" role="alert">
    {props.error}
  </p>
);

export type WorkspaceTab = "files" | "checkpoints" | "diff" | "activity" | "search";

const TABS: readonly [WorkspaceTab, string, string][] = [
  ["files", "Files", ""],
  ["checkpoints", "Checkpoints", "/checkpoints"],
  ["diff", "Diff", "/diff"],
  ["activity", "Activity", "/activity"],
  ["search", "Search", "/search"],
];

/** A workspace's pages: its name and the tabs between them. */
export function WorkspacePage(props: { workspace: string; tab: WorkspaceTab | null; children: ComponentChildren }) {
  const base = `/ws/${seg(props.workspace)}`;
  return (
    <section>
      <h1>
        <Link href={base}>{props.workspace}</Link>
      </h1>
      <nav class="tabs" aria-label="Workspace">
        {TABS.map(([tab, label, path]) => (
          <Link key={tab} href={`${base}${path}`} class={tab === props.tab ? "current" : undefined}>
            {label}
          </Link>
        ))}
      </nav>
      {props.children}
    </section>
  );
}
