// For MCP server authors on the official SDK: the brokered files/* methods as typed calls made
// through the handling request's `extra.sendRequest` (so they work over stdio and Streamable HTTP
// alike), chunked streams for large files, watch as an async iterator, and typed errors.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AfsError } from "../../core/errors.js";
import {
  BROKER_ERRORS,
  type BrokerErrorName,
  changedParams,
  consentResult,
  DEFAULT_CHUNK_BYTES,
  listResult,
  METHODS,
  pathResult,
  readResult,
  rootsListResult,
  watchResult,
  writeResult,
} from "./wire.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
export type ReadResult = z.infer<typeof readResult>;
export type WriteResult = z.infer<typeof writeResult>;
export type ListResult = z.infer<typeof listResult>;
export type ChangeEvent = z.infer<typeof changedParams>;
export type WatchEventName = ChangeEvent["event"];

const NAME_OF_CODE = new Map<number, BrokerErrorName>(
  Object.entries(BROKER_ERRORS).map(([name, code]) => [code, name as BrokerErrorName]),
);
/** The SDK's own request timeout (-32001) is the draft's TIMEOUT too. */
const SDK_TIMEOUT = -32001;

/** A files/* call the host refused: `code` is one of the draft's seven names. */
export class BrokeredFileError extends Error {
  constructor(
    readonly code: BrokerErrorName,
    message: string,
    readonly rpcCode: number,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "BrokeredFileError";
  }
  /** The path the host named, when it did. */
  get path(): string | undefined {
    return typeof this.data.path === "string" ? this.data.path : undefined;
  }
}

/** Turns a JSON-RPC error (an SDK McpError) into a BrokeredFileError; anything else is left as is. */
export function toBrokeredFileError(e: unknown): unknown {
  const err = e as { code?: unknown; message?: unknown; data?: unknown };
  if (typeof err?.code !== "number") return e;
  const data = typeof err.data === "object" && err.data !== null ? (err.data as Record<string, unknown>) : {};
  const named = typeof data.code === "string" && data.code in BROKER_ERRORS ? (data.code as BrokerErrorName) : null;
  const code = named ?? NAME_OF_CODE.get(err.code) ?? (err.code === SDK_TIMEOUT ? "TIMEOUT" : null);
  if (!code) return e;
  const message = String(err.message ?? "").replace(/^MCP error -?\d+: /, "");
  return new BrokeredFileError(code, message, err.code, data);
}

export interface BrokeredFilesOptions {
  /** Bytes per files/read or files/write chunk (default 1 MiB, the draft's default). */
  chunkBytes?: number;
  /** Per-request timeout in ms (the SDK's default is 60 s). */
  timeoutMs?: number;
}

interface WatchQueue {
  push(event: ChangeEvent): void;
  path: string;
  take?(watchId: string): ChangeEvent[];
}
const ORPHANS = "";
const MAX_ORPHANS = 256;
/** One files/changed handler per Server, fanning events out to the live watches by watchId. */
const watchers = new WeakMap<Server, Map<string, WatchQueue>>();

export function clientSupportsBrokering(server: Server): boolean {
  const caps = server.getClientCapabilities() as
    | { roots?: { filesystemBrokering?: unknown }; experimental?: Record<string, unknown> }
    | undefined;
  // The SDK strips unknown keys inside `roots`, so a stock server only ever sees the experimental flag.
  return Boolean(caps?.roots?.filesystemBrokering || caps?.experimental?.filesystemBrokering);
}

export class BrokeredFiles {
  private constructor(
    private readonly server: Server,
    private readonly extra: Extra,
    private readonly options: BrokeredFilesOptions,
  ) {}

  /** The files of the host that is handling `extra`'s request; throws when the host does not broker files. */
  static from(server: Server, extra: Extra, options: BrokeredFilesOptions = {}): BrokeredFiles {
    if (!clientSupportsBrokering(server)) {
      throw new AfsError(
        "INVALID_ARGUMENT",
        "the MCP client did not declare filesystemBrokering; run this server under a brokering host, " +
          "e.g. afs broker --root DIR -- SERVER CMD",
      );
    }
    return new BrokeredFiles(server, extra, options);
  }

  get chunkBytes(): number {
    return this.options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  }

  private async call<S extends z.ZodType>(method: string, params: object, schema: S): Promise<z.infer<S>> {
    const request = { method, params } as unknown as ServerRequest;
    const options = this.options.timeoutMs === undefined ? {} : { timeout: this.options.timeoutMs };
    try {
      return (await this.extra.sendRequest(request, schema, options)) as z.infer<S>;
    } catch (e) {
      throw toBrokeredFileError(e);
    }
  }

  roots() {
    return this.call(METHODS.rootsList, {}, rootsListResult);
  }
  /** Asks the person (through the host) for these paths; the answer says which were approved. */
  consent(message: string, paths: string[]) {
    return this.call(METHODS.consent, { message, requestedPaths: paths }, consentResult);
  }
  read(path: string, opts: { encoding?: "utf-8" | "base64"; offset?: number; length?: number } = {}) {
    return this.call(METHODS.read, { path, ...opts }, readResult);
  }
  write(
    path: string,
    content: string,
    opts: {
      encoding?: "utf-8" | "base64";
      create?: boolean;
      offset?: number;
      final?: boolean;
      expectedSha256?: string;
    } = {},
  ) {
    return this.call(METHODS.write, { path, content, ...opts }, writeResult);
  }
  list(path: string, opts: { recursive?: boolean; includeHidden?: boolean; cursor?: string } = {}) {
    return this.call(METHODS.list, { path, ...opts }, listResult);
  }
  /** Every entry, following nextCursor to the end. */
  async listAll(path: string, opts: { recursive?: boolean; includeHidden?: boolean } = {}) {
    const entries: ListResult["entries"] = [];
    let cursor: string | undefined;
    do {
      const page = await this.list(path, { ...opts, ...(cursor === undefined ? {} : { cursor }) });
      entries.push(...page.entries);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return entries;
  }
  create(path: string, type: "file" | "directory") {
    return this.call(METHODS.create, { path, type }, pathResult);
  }
  delete(path: string, opts: { recursive?: boolean } = {}) {
    return this.call(METHODS.delete, { path, ...opts }, pathResult);
  }
  rename(oldPath: string, newPath: string) {
    return this.call(METHODS.rename, { oldPath, newPath }, pathResult);
  }

  /** The file's bytes chunk by chunk (files/read with offset/length until eof). */
  async *readStream(path: string, opts: { chunkBytes?: number } = {}): AsyncGenerator<Buffer> {
    const length = opts.chunkBytes ?? this.chunkBytes;
    for (let offset = 0; ; ) {
      const r = await this.read(path, { encoding: "base64", offset, length });
      const bytes = Buffer.from(r.content, r.encoding === "base64" ? "base64" : "utf8");
      if (bytes.length > 0) yield bytes;
      offset += bytes.length;
      if (r.eof || bytes.length === 0) return;
    }
  }

  async readAll(path: string): Promise<Buffer> {
    const parts: Buffer[] = [];
    for await (const chunk of this.readStream(path)) parts.push(chunk);
    return Buffer.concat(parts);
  }

  /** Writes the chunks (re-cut to chunkBytes) with offset/final; the file appears whole when the last lands. */
  async writeStream(
    path: string,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    opts: { create?: boolean; expectedSha256?: string } = {},
  ): Promise<WriteResult> {
    let offset = 0;
    let pending: Buffer | null = null;
    let last: WriteResult | null = null;
    const send = async (bytes: Buffer, final: boolean) => {
      last = await this.write(path, bytes.toString("base64"), { encoding: "base64", offset, final, ...opts });
      offset += bytes.length;
    };
    for await (const chunk of recut(chunks, this.chunkBytes)) {
      if (pending) await send(pending, false);
      pending = chunk;
    }
    await send(pending ?? Buffer.alloc(0), true);
    return last as unknown as WriteResult;
  }

  writeAll(path: string, data: string | Uint8Array, opts: { create?: boolean; expectedSha256?: string } = {}) {
    return this.writeStream(path, [typeof data === "string" ? Buffer.from(data) : data], opts);
  }

  /**
   * Change events under `path` until the iteration ends (break, return or `close()`), which sends
   * files/unwatch. Events arriving faster than they are consumed wait in a queue.
   */
  async watch(
    path: string,
    opts: { recursive?: boolean; events?: WatchEventName[] } = {},
  ): Promise<AsyncIterableIterator<ChangeEvent> & { watchId: string; close(): Promise<void> }> {
    const table = this.watchTable();
    const { watchId } = await this.call(METHODS.watch, { path, ...opts }, watchResult);
    const queue: ChangeEvent[] = [];
    let wake: (() => void) | null = null;
    let closed = false;
    table.set(watchId, {
      path,
      push: (event) => {
        queue.push(event);
        wake?.();
      },
    });
    // Events can beat the watch's own answer to this process; they wait in the orphan list.
    const early = table.get(ORPHANS)?.take?.(watchId) ?? [];
    queue.push(...early);
    const close = async (): Promise<void> => {
      if (closed) return;
      closed = true;
      table.delete(watchId);
      wake?.();
      await this.call(METHODS.unwatch, { watchId }, z.object({}).passthrough()).catch(() => {});
    };
    const iterator = {
      watchId,
      close,
      [Symbol.asyncIterator]() {
        return this;
      },
      async next(): Promise<IteratorResult<ChangeEvent>> {
        while (queue.length === 0 && !closed) await new Promise<void>((resolve) => (wake = resolve));
        const event = queue.shift();
        return event ? { value: event, done: false } : { value: undefined, done: true };
      },
      async return(): Promise<IteratorResult<ChangeEvent>> {
        await close();
        return { value: undefined, done: true };
      },
    };
    return iterator;
  }

  private watchTable(): Map<string, WatchQueue> {
    let table = watchers.get(this.server);
    if (!table) {
      const created = new Map<string, WatchQueue>();
      table = created;
      watchers.set(this.server, created);
      const orphans: ChangeEvent[] = [];
      created.set(ORPHANS, {
        path: "\0",
        push: (event) => {
          orphans.push(event);
          if (orphans.length > MAX_ORPHANS) orphans.shift();
        },
        take: (watchId) => {
          const mine = orphans.filter((e) => e.watchId === watchId);
          orphans.splice(0, orphans.length, ...orphans.filter((e) => e.watchId !== watchId));
          return mine;
        },
      });
      const schema = z.object({ method: z.literal(METHODS.changed), params: changedParams });
      this.server.setNotificationHandler(schema, ({ params }) => {
        // A host that names the watch reaches that one; otherwise every watch over the path.
        const targets = params.watchId
          ? [created.get(params.watchId) ?? created.get(ORPHANS)]
          : [...created.values()].filter((w) => isUnder(params.path, w.path));
        for (const w of targets) w?.push(params);
      });
    }
    return table;
  }
}

function isUnder(path: string, dir: string): boolean {
  const d = dir.replace(/\/+$/, "");
  return d === "" || d === "." || path === d || path.startsWith(`${d}/`);
}

/** Re-cuts arbitrary byte chunks into pieces of exactly `size` bytes (the last may be shorter). */
async function* recut(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, size: number): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let held = 0;
  for await (const chunk of chunks) {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (held + buf.length >= size) {
      const take = size - held;
      parts.push(buf.subarray(0, take));
      yield Buffer.concat(parts);
      parts = [];
      held = 0;
      buf = buf.subarray(take);
    }
    if (buf.length > 0) {
      parts.push(buf);
      held += buf.length;
    }
  }
  if (held > 0) yield Buffer.concat(parts);
}
