// The ACP client filesystem: answers an agent's fs/read_text_file and fs/write_text_file over the
// volumes of each session's directories, with open editor buffers laid over them, writes approved by
// policy and every change recorded. Wire parameters in, ops and volumes below; nothing else.

import type { Approvals } from "../../access/approvals.js";
import { checkTextFile, checkWriteArgs, type Limits } from "../../access/limits.js";
import { AfsError, isAfsError } from "../../core/errors.js";
import { sha256 } from "../../core/hash.js";
import { decodeText } from "../../core/text.js";
import { unifiedPatch } from "../../core/unified-diff.js";
import { lineWindow } from "../../ops/line-window.js";
import { linesOf, SMALL_FILE_BYTES } from "../../ops/lines.js";
import { inShapeOf, writeText } from "../../ops/write-text.js";
import { LocalDirVolume } from "../../volume/local-dir/local-dir-volume.js";
import type { OpenFile } from "../../volume/volume.js";
import { EditorBuffers } from "./buffers.js";
import { type ChangedFile, ChangeTracker } from "./changes.js";
import { type Located, locate, openRoots, type Root, type VolumeOpener } from "./roots.js";

export interface ReadParams {
  sessionId: string;
  path: string;
  line?: number | null;
  limit?: number | null;
}

export interface WriteParams {
  sessionId: string;
  path: string;
  content: string;
}

/** Where a tool call said it works, from the agent's session/update notifications. */
export interface ToolCallNote {
  toolCallId: string;
  status?: string | null;
  locations?: ReadonlyArray<{ path: string }> | null;
}

export interface AcpFilesOptions {
  limits: Limits;
  approvals: Approvals;
  /** The agent's name as it introduced itself, for the change log. */
  agentName?: () => string;
  /** Opens the volume serving a session directory; default: the directory itself, confined. */
  openVolume?: VolumeOpener;
  /** Called when an agent's write went into an open editor buffer instead of the disk. */
  onBufferWrite?: (path: string, text: string) => void;
  maxEvents?: number;
}

const MAX_TOOL_CALLS = 1000;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const notAFile = (at: Located): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${at.host} is a directory or not a regular file; only text files can be read`, {
    path: at.host,
  });
const binaryFile = (at: Located): AfsError =>
  new AfsError("INVALID_ARGUMENT", `${at.host} is a binary file (not UTF-8 text); it cannot be read as text`, {
    path: at.host,
  });

export class AcpFiles {
  readonly buffers: EditorBuffers;
  readonly changes: ChangeTracker;
  private readonly sessions = new Map<string, Root[]>();
  private readonly creating = new Set<Promise<string>>();
  /** session → tool calls in progress → the host paths they named. */
  private readonly toolCalls = new Map<string, Map<string, string[]>>();
  private readonly openVolume: VolumeOpener;

  constructor(private readonly options: AcpFilesOptions) {
    this.buffers = new EditorBuffers(options.onBufferWrite);
    this.changes = new ChangeTracker(options.maxEvents);
    this.openVolume = options.openVolume ?? ((dir) => LocalDirVolume.open(dir));
  }

  /**
   * Opens a session's directories, then runs `create` (session/new) and registers them under the id
   * it answers. An fs request naming an id not known yet waits for sessions being created: an agent
   * may call the moment it has answered, before that answer has been handled here.
   */
  async addSession(
    create: () => Promise<string>,
    cwd: string,
    additionalDirectories: readonly string[] = [],
  ): Promise<string> {
    const roots = await openRoots([cwd, ...additionalDirectories], this.openVolume);
    const created = create().then((id) => {
      this.sessions.set(id, roots);
      return id;
    });
    this.creating.add(created);
    try {
      return await created;
    } finally {
      this.creating.delete(created);
    }
  }

  removeSession(sessionId: string): void {
    this.sessions.delete(sessionId);
    this.toolCalls.delete(sessionId);
  }

  async readTextFile(params: ReadParams): Promise<{ content: string }> {
    const at = await this.locate(params.sessionId, params.path);
    const start = Math.max(1, params.line ?? 1);
    if (params.limit !== undefined && params.limit !== null && params.limit < 0) {
      throw new AfsError("INVALID_ARGUMENT", `limit must be 0 or more lines; got ${params.limit}`, { path: at.host });
    }
    const limit = params.limit ?? null;
    const windowed = start > 1 || limit !== null;
    let text = this.buffers.get(at.host) ?? null;
    if (text === null) {
      const file = await this.open(at);
      // A file that does not exist reads as empty: agents such as Gemini CLI read before they create.
      if (file === null) return { content: "" };
      try {
        // A large file is streamed for a window, and refused whole before it is read.
        if (file.size > SMALL_FILE_BYTES && windowed) return { content: await this.window(at, file, start, limit) };
        if (!windowed && file.size > this.options.limits.maxTextFileBytes) {
          const bom = (await file.read(0, 3)).equals(BOM) ? 3 : 0;
          checkTextFile(this.options.limits, at.host, file.size - bom);
        }
        text = decodeText(await file.read(0, file.size));
      } finally {
        await file.close();
      }
      if (text === null) throw binaryFile(at);
    }
    const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
    let content = body;
    if (windowed) {
      const lines = linesOf(body);
      content = lines.slice(start - 1, limit === null ? lines.length : start - 1 + limit).join("");
    }
    // The cap bounds what one answer carries: a window of a large file is fine.
    checkTextFile(this.options.limits, at.host, Buffer.byteLength(content));
    return { content };
  }

  /** Lines start.. (limit of them, or to the end) of a file, streamed: only the window is held. */
  private async window(at: Located, file: OpenFile, start: number, limit: number | null): Promise<string> {
    const end = limit === null ? Number.POSITIVE_INFINITY : start - 1 + limit;
    const maxBytes = this.options.limits.maxTextFileBytes;
    const w = await lineWindow(file, { start, end, toEnd: false, maxBytes });
    if (w.binary) throw binaryFile(at);
    if (w.content === null) checkTextFile(this.options.limits, at.host, w.bytes);
    return w.content ?? "";
  }

  /** The file at `at` opened for reading; null when nothing is there. */
  private async open(at: Located): Promise<OpenFile | null> {
    try {
      return await at.root.volume.openFile(at.path);
    } catch (e) {
      if (isAfsError(e) && e.code === "NOT_FOUND") return null;
      if (isAfsError(e) && e.code === "INVALID_ARGUMENT") throw notAFile(at);
      throw e;
    }
  }

  async writeTextFile(params: WriteParams): Promise<Record<string, never>> {
    const at = await this.locate(params.sessionId, params.path);
    checkWriteArgs(this.options.limits, { content: params.content });
    const { data, text: before } = await this.current(at);
    const buffered = this.buffers.get(at.host) !== undefined;
    const after = buffered ? params.content : inShapeOf(before, params.content);
    const decision = await this.options.approvals.decide({
      kind: "write",
      session: params.sessionId,
      title: `write ${at.host}`,
      paths: [at.host],
      ...(this.options.approvals.asks ? { diff: unifiedPatch(at.host, before, after) } : {}),
    });
    if (!decision.allowed) {
      throw new AfsError(
        "PERMISSION_DENIED",
        `writing ${at.host} was refused (approval: ${this.options.approvals.mode}${decision.note ? `: ${decision.note}` : ""}); the file is unchanged`,
        { path: at.host },
      );
    }
    let newHash = sha256(after);
    if (!(buffered && this.buffers.write(at.host, after))) {
      const written = await writeText(at.root.volume, { path: at.path, content: params.content }, data);
      newHash = written.sha256 ?? newHash;
    }
    const toolCallId = this.toolCallFor(params.sessionId, at.host);
    this.changes.record(
      {
        session: params.sessionId,
        agent: this.options.agentName?.() ?? "agent",
        ...(toolCallId ? { toolCallId } : {}),
        path: at.host,
        oldHash: data === null ? null : sha256(data),
        newHash,
        target: buffered ? "buffer" : "disk",
      },
      before,
    );
    return {};
  }

  /** Follows the agent's tool calls, so a write can name the one it carried out. */
  noteToolCall(sessionId: string, call: ToolCallNote): void {
    const calls = this.toolCalls.get(sessionId) ?? new Map<string, string[]>();
    this.toolCalls.set(sessionId, calls);
    if (call.status === "completed" || call.status === "failed") {
      calls.delete(call.toolCallId);
      return;
    }
    const paths = call.locations?.map((l) => l.path) ?? calls.get(call.toolCallId) ?? [];
    calls.delete(call.toolCallId); // re-inserted last: the newest call is found first
    calls.set(call.toolCallId, paths);
    if (calls.size > MAX_TOOL_CALLS) calls.delete(calls.keys().next().value as string);
  }

  /** The session's changed files, each with a unified diff from before its first write to now. */
  changedFiles(sessionId: string): Promise<ChangedFile[]> {
    const roots = this.sessions.get(sessionId) ?? [];
    return this.changes.changedFiles(sessionId, async (path) => (await this.current(locate(roots, path))).text);
  }

  private async locate(sessionId: string, path: unknown): Promise<Located> {
    let roots = this.sessions.get(sessionId);
    if (!roots && this.creating.size > 0) {
      await Promise.allSettled([...this.creating]);
      roots = this.sessions.get(sessionId);
    }
    if (!roots) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        `unknown session ${JSON.stringify(sessionId)}; use the id session/new returned`,
        {
          sessionId,
        },
      );
    }
    return locate(roots, path);
  }

  /**
   * What a write starts from at a path: an open buffer first, else the file's bytes and text (text
   * null for a binary file). Both null when nothing (or no regular file) is there.
   */
  private async current(at: Located): Promise<{ data: Buffer | null; text: string | null }> {
    const buffered = this.buffers.get(at.host);
    if (buffered !== undefined) return { data: Buffer.from(buffered), text: buffered };
    let data: Buffer;
    try {
      data = await at.root.volume.readFile(at.path);
    } catch (e) {
      if (isAfsError(e) && (e.code === "NOT_FOUND" || e.code === "INVALID_ARGUMENT")) return { data: null, text: null };
      throw e;
    }
    return { data, text: decodeText(data) };
  }

  private toolCallFor(sessionId: string, host: string): string | undefined {
    const calls = [...(this.toolCalls.get(sessionId) ?? new Map<string, string[]>())].reverse();
    return (calls.find(([, paths]) => paths.includes(host)) ?? calls.find(([, paths]) => paths.length === 0))?.[0];
  }
}
