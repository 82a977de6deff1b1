// `afs.attachments`: directories whose contents are a workspace's live state (afs acp uses them),
// linked on this machine and recorded into the workspace in O(changes).
import { AfsError } from "../../core/errors.js";
import { attachments, realDirectory, setAttachment, workspaceNameFor } from "../attachments.js";
import { createCheckpoint } from "../checkpoints.js";
import { checkName } from "../names.js";
import type { RecordOptions, RecordResult } from "../record.js";
import { attachedDirectory, type Engine, importWorkspace, recordDirectory } from "./engine.js";

export interface AttachResult {
  workspace: string;
  /** The directory's real path. */
  dir: string;
  /** True when the workspace was created from the directory. */
  created: boolean;
  /** What recording the directory into an existing workspace found (null when just created). */
  record: RecordResult | null;
}

export class Attachments {
  constructor(private readonly engine: Engine) {}

  /**
   * Attaches a directory to a workspace, whose live state then *is* the directory. On first use the
   * workspace (named after the directory unless `workspace` is given) is created from it; when it is
   * already attached, the directory is recorded into it. An existing workspace that is not attached
   * is only taken with `adopt` (a dirty live state is kept as a safety checkpoint first).
   */
  async attach(
    dir: string,
    options: { workspace?: string; description?: string; adopt?: boolean } = {},
  ): Promise<AttachResult> {
    const { home, store } = this.engine;
    const real = await realDirectory(dir);
    const links = await attachments(home);
    const holder = Object.keys(links).find((ws) => links[ws] === real);
    const name = checkName("workspace", options.workspace ?? holder ?? workspaceNameFor(real));
    if (holder && holder !== name) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `${real} is attached to workspace ${holder}; use that workspace, or detach it first`,
        { dir: real, workspace: holder },
      );
    }
    const linked = links[name];
    if (linked && linked !== real) {
      throw new AfsError(
        "ALREADY_EXISTS",
        `workspace ${name} is attached to ${linked}; choose another workspace name for ${real}`,
        { workspace: name, dir: linked },
      );
    }
    const exists = (await store.getWorkspace(name)) !== null;
    if (!exists) {
      await importWorkspace(this.engine, name, real, { description: options.description ?? `attached to ${real}` });
      await setAttachment(home, name, real);
      return { workspace: name, dir: real, created: true, record: null };
    }
    if (!linked) {
      if (!options.adopt) {
        throw new AfsError(
          "ALREADY_EXISTS",
          `workspace ${name} already exists and is not attached to a directory; choose another workspace name for ${real}, or adopt it (afs acp --adopt; its live state becomes the directory)`,
          { workspace: name, dir: real },
        );
      }
      if ((await store.overlayCount(name)) > 0) {
        await createCheckpoint(this.engine, name, {
          kind: "safety",
          description: `live state before attaching ${real}`,
        });
      }
      await setAttachment(home, name, real);
    }
    return { workspace: name, dir: real, created: false, record: await this.record(name) };
  }

  /** The directory attached to a workspace, or null. */
  directory(name: string): Promise<string | null> {
    return attachedDirectory(this.engine, name);
  }

  /** Unlinks a workspace from its directory (both stay as they are); false when it was not attached. */
  detach(name: string): Promise<boolean> {
    return setAttachment(this.engine.home, name, null);
  }

  /**
   * Brings an attached workspace's live state to exactly what its directory holds (only `paths`
   * when given: a watcher's changes), as one commit; nothing changed, nothing committed.
   */
  record(name: string, options: RecordOptions = {}): Promise<RecordResult> {
    return recordDirectory(this.engine, name, options);
  }
}
