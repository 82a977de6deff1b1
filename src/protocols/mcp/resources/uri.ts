// Resource URIs for workspace files: afs://{workspace}/{+path} for the live state and
// afs://{workspace}@{checkpoint}/{+path} for a checkpoint. URIs come from clients, so parsing is
// strict: a malformed or escaping URI is refused with a message saying how to write it, never repaired.
import { AfsError } from "../../../core/errors.js";
import { ROOT, segments } from "../../../core/paths.js";
import { checkName } from "../../../workspace/names.js";

export const SCHEME = "afs:";

/** A parsed resource URI: which workspace, which checkpoint (null: the live state), which file. */
export interface ResourceAddress {
  workspace: string;
  checkpoint: string | null;
  /** Normalized workspace path, e.g. "/src/main.go". */
  path: string;
}

export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
}

/** The templates `resources/templates/list` hands out (RFC 6570: {+path} keeps its slashes). */
export const RESOURCE_TEMPLATES: readonly ResourceTemplate[] = [
  {
    uriTemplate: "afs://{workspace}/{+path}",
    name: "workspace-file",
    title: "A file in an afs workspace (live state)",
    description:
      "A file as the workspace holds it now, e.g. afs://demo/src/main.go. Subscribe to be told when it changes.",
  },
  {
    uriTemplate: "afs://{workspace}@{checkpoint}/{+path}",
    name: "checkpoint-file",
    title: "A file in an afs checkpoint (read-only)",
    description:
      "A file as checkpoint {checkpoint} of the workspace holds it, e.g. afs://demo@v1/src/main.go; never changes.",
  },
];

// Unreserved characters plus the sub-delimiters and ":" "@" a path segment may carry unencoded.
const encodeSegment = (s: string): string =>
  encodeURIComponent(s).replace(/%(2[146-9ABC]|3[ABD]|40)/g, (m) => decodeURIComponent(m));

/** The URI of a file: `path` is a normalized workspace path. */
export function resourceUri(workspace: string, path: string, checkpoint: string | null = null): string {
  const authority = checkpoint === null ? workspace : `${workspace}@${checkpoint}`;
  return `afs://${authority}/${segments(path).map(encodeSegment).join("/")}`;
}

const badUri = (uri: string, why: string): AfsError =>
  new AfsError(
    "INVALID_ARGUMENT",
    `resource URI ${JSON.stringify(uri.length > 200 ? `${uri.slice(0, 200)}…` : uri)} ${why}; write it as afs://WORKSPACE/PATH or afs://WORKSPACE@CHECKPOINT/PATH`,
    { uri },
  );

function decode(uri: string, part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw badUri(uri, "has a malformed percent-encoding");
  }
}

/**
 * The workspace, checkpoint and path a URI names. Each path segment is percent-decoded on its own,
 * and a segment that decodes to "", ".", "..", or holds "/", "\" or NUL is refused (INVALID_PATH):
 * a resource URI names one file directly, so nothing in it may climb or smuggle a separator.
 */
export function parseResourceUri(uri: string): ResourceAddress {
  if (typeof uri !== "string" || !uri.startsWith("afs://")) throw badUri(String(uri), "is not an afs:// URI");
  if (/[?#]/.test(uri)) throw badUri(uri, "has a query or fragment (percent-encode ? as %3F and # as %23 in names)");
  const rest = uri.slice("afs://".length);
  const slash = rest.indexOf("/");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const rawPath = slash < 0 ? "" : rest.slice(slash + 1);
  const at = authority.indexOf("@");
  const workspace = decode(uri, at < 0 ? authority : authority.slice(0, at));
  const checkpoint = at < 0 ? null : decode(uri, authority.slice(at + 1));
  if (workspace === "") throw badUri(uri, "names no workspace");
  checkName("workspace", workspace);
  if (checkpoint !== null) checkName("checkpoint", checkpoint);
  if (rawPath === "") throw badUri(uri, "names no file");
  const parts = rawPath.split("/").map((raw) => {
    const part = decode(uri, raw);
    if (part === "" || part === "." || part === ".." || /[/\\\0]/.test(part)) {
      throw new AfsError(
        "INVALID_PATH",
        `resource URI ${JSON.stringify(uri)} has the path segment ${JSON.stringify(raw)}; name the file directly, without empty, "." or ".." segments or encoded "/", "\\" or NUL`,
        { uri },
      );
    }
    return part;
  });
  return { workspace, checkpoint, path: parts.length === 0 ? ROOT : `/${parts.join("/")}` };
}
