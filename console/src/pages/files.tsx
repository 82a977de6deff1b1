// `/ws/NAME` and `/ws/NAME/files/PATH?at=CHECKPOINT`: a workspace's files at live or at any
// checkpoint. A directory comes a page at a time (file_list's cursor), so a directory of any size
// renders one page of rows; a file opens in the viewer (file-view.tsx).
import { useState } from "preact/hooks";
import { ErrorNote, Loading, WorkspacePage } from "../components.js";
import { useCall } from "../hooks.js";
import { Link, navigate, pathSegs, seg } from "../router.js";
import { useSession } from "../session.js";
import { FileView } from "./file-view.js";
import { exact, size } from "./ws-format.js";
import "./files.css";

export interface Item {
  path: string;
  name: string;
  kind: "file" | "dir" | "symlink";
  size: number;
  modified_at: string;
  target?: string;
}

interface Listed {
  path: string;
  items: Item[];
  truncated: boolean;
  cursor?: string;
}

/** Rows per page of a directory: enough to scan, few enough to render at once. */
export const PAGE = 500;

/** The console's address of a path in a workspace, at a checkpoint or live. */
export function filesHref(workspace: string, path: string, at: string | null, line?: number): string {
  const query = new URLSearchParams();
  if (at) query.set("at", at);
  if (line) query.set("line", String(line));
  const q = query.toString();
  return `/ws/${seg(workspace)}/files${pathSegs(path)}${q ? `?${q}` : ""}`;
}

export function Files(props: { workspace: string; path: string; at: string | null; line: number | null }) {
  const { workspace, path, at } = props;
  // The cursors of the pages before this one, so "Previous" goes back without a count.
  const [cursors, setCursors] = useState<string[]>([]);
  // The route keys this page by workspace, path and checkpoint, so another directory starts at its first page.
  const cursor = cursors[cursors.length - 1];
  const listed = useCall<Listed>("file_list", {
    workspace,
    path,
    limit: PAGE,
    ...(at ? { checkpoint: at } : {}),
    ...(cursor ? { cursor } : {}),
  });
  const item = listed.data?.items[0];
  const isFile = listed.data?.items.length === 1 && item?.path === path && item.kind !== "dir";

  return (
    <WorkspacePage workspace={workspace} tab="files">
      <div class="files-bar">
        <Breadcrumbs workspace={workspace} path={path} at={at} />
        <CheckpointPicker workspace={workspace} path={path} at={at} />
      </div>
      {listed.error && <ErrorNote error={listed.error} />}
      {!listed.data && !listed.error && <Loading what={path} />}
      {listed.data && item && isFile && <FileView workspace={workspace} item={item} at={at} line={props.line} />}
      {listed.data && !isFile && (
        <Directory
          workspace={workspace}
          at={at}
          listed={listed.data}
          first={cursors.length * PAGE + 1}
          onNext={() => listed.data?.cursor && setCursors([...cursors, listed.data.cursor])}
          onPrevious={cursors.length > 0 ? () => setCursors(cursors.slice(0, -1)) : null}
        />
      )}
    </WorkspacePage>
  );
}

function Breadcrumbs(props: { workspace: string; path: string; at: string | null }) {
  const names = props.path.split("/").filter((n) => n !== "");
  return (
    <nav aria-label="Path" class="crumbs">
      <ol>
        <li>
          {names.length === 0 ? (
            <span aria-current="page">{props.workspace}</span>
          ) : (
            <Link href={filesHref(props.workspace, "/", props.at)}>{props.workspace}</Link>
          )}
        </li>
        {names.map((name, i) => {
          const here = `/${names.slice(0, i + 1).join("/")}`;
          return (
            <li key={here}>
              {i === names.length - 1 ? (
                <span aria-current="page">{name}</span>
              ) : (
                <Link href={filesHref(props.workspace, here, props.at)}>{name}</Link>
              )}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

/** Live or a checkpoint: changing it keeps the path and changes `at` in the address. */
function CheckpointPicker(props: { workspace: string; path: string; at: string | null }) {
  const session = useSession();
  const cps = useCall<{ checkpoints: { name: string; kind: string; created_at: string }[] }>(
    session.can("checkpoint_list") ? "checkpoint_list" : null,
    { workspace: props.workspace },
  );
  if (!session.can("checkpoint_list")) {
    return props.at ? <span class="files-at">at checkpoint {props.at}</span> : null;
  }
  const names = cps.data?.checkpoints ?? [];
  return (
    <span class="files-at">
      <label for="files-at">Show</label>{" "}
      <select
        id="files-at"
        value={props.at ?? ""}
        onChange={(e) => navigate(filesHref(props.workspace, props.path, e.currentTarget.value || null))}
      >
        <option value="">live state</option>
        {props.at && !names.some((c) => c.name === props.at) && <option value={props.at}>checkpoint {props.at}</option>}
        {names.map((c) => (
          <option key={c.name} value={c.name}>
            checkpoint {c.name} ({c.kind}, {exact(c.created_at)})
          </option>
        ))}
      </select>
    </span>
  );
}

function Directory(props: {
  workspace: string;
  at: string | null;
  listed: Listed;
  first: number;
  onNext(): void;
  onPrevious: (() => void) | null;
}) {
  const { items, cursor } = props.listed;
  if (items.length === 0) return <p class="muted">{props.listed.path} is empty.</p>;
  const last = props.first + items.length - 1;
  const pager = (
    <div class="files-pager">
      <span class="muted">
        Entries {props.first}–{last}
        {cursor ? ", more follow" : ""}
      </span>
      {props.onPrevious && (
        <button type="button" onClick={props.onPrevious}>
          Previous {PAGE}
        </button>
      )}
      {cursor && (
        <button type="button" onClick={props.onNext}>
          Next {PAGE}
        </button>
      )}
    </div>
  );
  return (
    <>
      {(cursor || props.onPrevious) && pager}
      <table class="files-list">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col" class="num">
              Size
            </th>
            <th scope="col">Modified</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.path}>
              <td>
                <Link href={filesHref(props.workspace, i.path, props.at)} class={`files-${i.kind}`}>
                  {i.kind === "dir" ? `${i.name}/` : i.name}
                </Link>
                {i.target !== undefined && <span class="muted"> → {i.target}</span>}
              </td>
              <td>{i.kind}</td>
              <td class="num" title={`${i.size} bytes`}>
                {i.kind === "dir" ? "" : size(i.size)}
              </td>
              <td title={i.modified_at}>{exact(i.modified_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {(cursor || props.onPrevious) && pager}
    </>
  );
}
