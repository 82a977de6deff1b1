// Path confinement for a directory volume: every volume path is resolved to where it really lands,
// symlinks included (dangling ones too), and refused unless that place is inside the root.
import * as fsp from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { AfsError } from "../../core/errors.js";
import { baseName, parentOf, ROOT, segments } from "../../core/paths.js";
import { notFound, tooManySymlinks } from "../errors.js";
import { lstatOrNull } from "./disk.js";
import { fsError } from "./errno.js";

const MAX_SYMLINK_HOPS = 40;

export class Confinement {
  /** The root as given, made absolute (its real path is resolved on first use). */
  readonly given: string;
  /** Human-readable name for messages: "directory /srv/data". */
  readonly label: string;
  private rootPromise: Promise<string> | null = null;

  constructor(root: string) {
    this.given = resolve(root);
    this.label = `directory ${this.given}`;
  }

  /** The root's real path; NOT_FOUND or INVALID_ARGUMENT (not a directory) on first use. */
  root(): Promise<string> {
    this.rootPromise ??= (async () => {
      const real = await fsp.realpath(this.given).catch((e) => {
        throw fsError(e, this.given);
      });
      const st = await fsp.stat(real);
      if (!st.isDirectory()) throw new AfsError("INVALID_ARGUMENT", `${this.given} is not a directory`);
      return real;
    })();
    return this.rootPromise;
  }

  /**
   * Where a path really lands with every symlink followed (dangling ones too, so a write cannot
   * create a file through a link that points outside). Refuses anything outside the root.
   */
  async locate(p: string): Promise<string> {
    const real = await landing(await this.host(p), 0, p);
    await this.confine(real, p);
    return real;
  }

  /** The location of the entry itself (lstat semantics): its parent resolved, its name kept. */
  async entryLocation(p: string): Promise<string> {
    if (p === ROOT) return this.root();
    return join(await this.locate(parentOf(p)), baseName(p));
  }

  /** The volume path of a host location inside the root. */
  async volumePath(real: string): Promise<string> {
    const rel = relative(await this.root(), real);
    return rel === "" ? ROOT : `/${rel.split(sep).join("/")}`;
  }

  private async host(p: string): Promise<string> {
    return join(await this.root(), ...segments(p));
  }

  private async confine(real: string, p: string): Promise<void> {
    const root = await this.root();
    if (real === root || real.startsWith(root.endsWith(sep) ? root : root + sep)) return;
    throw new AfsError(
      "PERMISSION_DENIED",
      `${p} resolves outside ${this.label} (through a symbolic link); only paths inside it can be used`,
      { path: p },
    );
  }
}

/**
 * Resolves `host` as the kernel would for a write: realpath when it exists; otherwise the deepest
 * existing prefix, following it by hand when it is a dangling symlink, plus the missing rest.
 */
async function landing(host: string, hops: number, p: string): Promise<string> {
  try {
    return await fsp.realpath(host);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // realpath's ELOOP is a loop (or too long a chain): the path cannot resolve.
    if (code === "ELOOP") throw tooManySymlinks(p);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw fsError(e, p);
  }
  let prefix = host;
  const missing: string[] = [];
  let st = await lstatOrNull(prefix);
  while (!st) {
    const parent = dirname(prefix);
    if (parent === prefix) throw notFound(p);
    missing.unshift(basename(prefix));
    prefix = parent;
    st = await lstatOrNull(prefix);
  }
  // ".." after a missing directory cannot be walked by the kernel either.
  if (missing.includes("..")) throw notFound(p);
  if (!st.isSymbolicLink()) return join(await fsp.realpath(prefix), ...missing);
  if (hops >= MAX_SYMLINK_HOPS) throw tooManySymlinks(p);
  const link = await fsp.readlink(prefix);
  // A relative target is read from the link's real directory, untouched, so ".." means what the kernel means.
  const next = link.startsWith("/") ? link : `${await fsp.realpath(dirname(prefix))}/${link}`;
  return landing(missing.length > 0 ? `${next}/${missing.join("/")}` : next, hops + 1, p);
}
