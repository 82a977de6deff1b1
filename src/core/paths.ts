// Workspace paths: absolute, "/"-separated, normalized, never above "/". Pure functions, no I/O.
import { AfsError } from "./errors.js";

export const ROOT = "/";

/**
 * Normalizes a user-supplied path: a relative path is taken from "/", "." and ".." are resolved,
 * duplicate and trailing slashes fold. A ".." that would climb above "/" is refused rather than
 * clamped, because an agent that writes one almost certainly means something else.
 */
export function normalizePath(input: string): string {
  if (typeof input !== "string") throw new AfsError("INVALID_PATH", "path must be a string");
  if (input.includes("\0")) throw new AfsError("INVALID_PATH", "path contains a NUL byte");
  if (input.includes("\\")) {
    throw new AfsError("INVALID_PATH", `path ${JSON.stringify(input)} contains a backslash; use "/" as separator`);
  }
  const out: string[] = [];
  for (const part of input.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length === 0) {
        throw new AfsError("INVALID_PATH", `path ${JSON.stringify(input)} escapes the root "/"`, { path: input });
      }
      out.pop();
      continue;
    }
    out.push(part);
  }
  return `/${out.join("/")}`;
}

export const isRoot = (path: string): boolean => path === ROOT;

export function parentOf(path: string): string {
  if (path === ROOT) return ROOT;
  const i = path.lastIndexOf("/");
  return i <= 0 ? ROOT : path.slice(0, i);
}

export function baseName(path: string): string {
  return path === ROOT ? "" : path.slice(path.lastIndexOf("/") + 1);
}

export const joinPath = (dir: string, name: string): string => (dir === ROOT ? `/${name}` : `${dir}/${name}`);

/** Path components: "/a/b" → ["a", "b"]; "/" → []. */
export const segments = (path: string): string[] => (path === ROOT ? [] : path.slice(1).split("/"));

/** Ancestors from the root down, excluding the path itself: "/a/b/c" → ["/", "/a", "/a/b"]. */
export function ancestors(path: string): string[] {
  const result: string[] = [];
  let cur = "";
  const segs = segments(path);
  result.push(ROOT);
  for (let i = 0; i < segs.length - 1; i++) {
    cur += `/${segs[i]}`;
    result.push(cur);
  }
  return path === ROOT ? [] : result;
}

/** True when `path` is `dir` itself or lies below it. */
export function isWithin(path: string, dir: string): boolean {
  if (dir === ROOT) return true;
  return path === dir || path.startsWith(`${dir}/`);
}

/** Rewrites a path under `from` to the same place under `to`. */
export function rebase(path: string, from: string, to: string): string {
  if (path === from) return to;
  const rest = path.slice(from === ROOT ? 0 : from.length);
  return to === ROOT ? rest : `${to}${rest}`;
}
