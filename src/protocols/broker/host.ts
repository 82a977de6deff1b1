// The broker host: afs answering roots/list, files/consent and files/* for MCP servers. Every call
// passes one gate (path resolved and confined, consent checked on the path and where it really
// lands, rate and time limited, audited); the operations themselves live in transfer.ts, files.ts
// and watches.ts. Wire-format free: attach.ts and the `afs broker` proxy translate.
import { ZodError, type z } from "zod";
import type { AuditLog, AuditOutcome } from "../../access/audit.js";
import { type ConsentMode, type ConsentProvider, covers, Grants } from "../../access/consent.js";
import { type RateLimit, RateLimiter } from "../../access/rate-limit.js";
import { AfsError, toAfsError } from "../../core/errors.js";
import { issuesText } from "../../core/schema-issues.js";
import type { Afs } from "../../workspace/afs.js";
import { consentFor } from "./consent.js";
import type { Authorized, BrokerContext, Gate, Note } from "./context.js";
import { create, list, remove, rename } from "./files.js";
import { canonicalKey, displayOf, keyOf, landing, resolvePath, type Target } from "./paths.js";
import { type BrokerRoot, openRoot, type RootSpec } from "./roots.js";
import { Staging } from "./staging.js";
import { read, write } from "./transfer.js";
import { Watches } from "./watches.js";
import { DEFAULT_CHUNK_BYTES, METHODS, REQUEST_PARAMS } from "./wire.js";

export { parseRootSpec, type RootSpec } from "./roots.js";

export interface BrokerHostOptions {
  afs?: Afs;
  roots: RootSpec[];
  consent: ConsentProvider;
  audit?: AuditLog;
  chunkBytes?: number;
  timeoutMs?: number;
  rate?: RateLimit;
  /** Entries per files/list page (default 1000). */
  maxListEntries?: number;
  /** Largest file a chunked upload may build (default 1 GiB). */
  maxUploadBytes?: number;
}

type Op = (host: BrokerHost, ctx: BrokerContext, params: never) => Promise<Record<string, unknown>>;

// A person may take a while to answer a consent request; every other call gets the operation timeout.
const CONSENT_TIMEOUT_MS = 10 * 60 * 1000;

const OPS: Record<string, Op> = {
  [METHODS.consent]: (h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/consent"]>) => consentFor(h.gate(), ctx, p),
  [METHODS.read]: (_h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/read"]>) => read(ctx, p),
  [METHODS.write]: (_h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/write"]>) => write(ctx, p),
  [METHODS.list]: (_h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/list"]>) => list(ctx, p),
  [METHODS.create]: (_h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/create"]>) => create(ctx, p),
  [METHODS.delete]: (_h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/delete"]>) => remove(ctx, p),
  [METHODS.rename]: (_h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/rename"]>) => rename(ctx, p),
  [METHODS.watch]: (h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/watch"]>) => h.watches.start(ctx, p),
  [METHODS.unwatch]: async (h, ctx, p: z.infer<(typeof REQUEST_PARAMS)["files/unwatch"]>) => {
    h.watches.stop(ctx.server, p.watchId);
    return {};
  },
};

interface Running {
  server: string;
  controller: AbortController;
  /** Consent keys and modes the call was let through on, checked again when consent narrows. */
  keys: { key: string; mode: ConsentMode }[];
}

export class BrokerHost {
  readonly watches: Watches;
  private readonly grants: Grants;
  private readonly limiter: RateLimiter | null;
  private readonly running = new Set<Running>();
  private readonly rootsListeners: (() => void)[] = [];
  private readonly notifyListeners: ((server: string, method: string, params: Record<string, unknown>) => void)[] = [];
  private readonly chunkBytes: number;
  private readonly timeoutMs: number;
  private readonly unsubscribe: (() => void) | undefined;
  private closed = false;

  private constructor(
    private readonly options: BrokerHostOptions,
    private list: BrokerRoot[],
    private readonly staging: Staging,
  ) {
    this.grants = new Grants(options.consent);
    this.limiter = options.rate ? new RateLimiter(options.rate) : null;
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    const display = (t: Target): string => displayOf(this.list, t);
    this.watches = new Watches(
      (server, params) => {
        for (const l of this.notifyListeners) l(server, METHODS.changed, params);
      },
      display,
      options.afs,
    );
    this.unsubscribe = options.consent.onChange?.(() => void this.enforce());
  }

  static async open(options: BrokerHostOptions): Promise<BrokerHost> {
    const roots: BrokerRoot[] = [];
    for (const spec of options.roots) roots.push(await openRoot(spec, options.afs, new Set(roots.map((r) => r.name))));
    return new BrokerHost(options, roots, await Staging.open(options.maxUploadBytes));
  }

  roots(): { uri: string; name: string }[] {
    return this.list.map((r) => ({ uri: r.uri, name: r.name }));
  }

  async addRoot(spec: RootSpec): Promise<void> {
    const root = await openRoot(spec, this.options.afs, new Set(this.list.map((r) => r.name)));
    // The same place, served the same way, is no change (and no notification).
    if (this.list.some((r) => r.uri === root.uri && r.readOnly === root.readOnly)) return;
    this.list = [...this.list, root];
    for (const l of this.rootsListeners) l();
  }

  async removeRoot(name: string): Promise<void> {
    const root = this.list.find((r) => r.name === name);
    if (!root) return;
    this.list = this.list.filter((r) => r !== root);
    this.watches.stopWhere((w) => w.root === root);
    await this.staging.cancel((_s, key) => covers(root.name, key));
    for (const l of this.rootsListeners) l();
  }

  onRootsChanged(cb: () => void): void {
    this.rootsListeners.push(cb);
  }

  onNotification(cb: (server: string, method: string, params: Record<string, unknown>) => void): void {
    this.notifyListeners.push(cb);
  }

  /** The view consent.ts works through. */
  gate(): Gate {
    return {
      roots: this.list,
      grants: this.grants,
      canonical: (p) => canonicalKey(this.list, p),
      display: (t) => displayOf(this.list, t),
    };
  }

  /** Answers one request from server `server` (roots/list, files/consent, files/*); throws AfsError (map with toBrokerError). */
  async handle(
    server: string,
    method: string,
    params: unknown,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    if (method === METHODS.rootsList) return { roots: this.roots() };
    const started = Date.now();
    const note: Note = {};
    const stage = { current: "params" as "params" | "path" | "consent" | "op" };
    const entry: Running = { server, controller: new AbortController(), keys: [] };
    const onAbort = (): void => entry.controller.abort(new AfsError("TIMEOUT", "the request was cancelled"));
    const timeoutMs = method === METHODS.consent ? Math.max(this.timeoutMs, CONSENT_TIMEOUT_MS) : this.timeoutMs;
    const timer = setTimeout(
      () => entry.controller.abort(new AfsError("TIMEOUT", `${method} did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    this.running.add(entry);
    try {
      if (this.closed) throw new AfsError("INVALID_ARGUMENT", "the broker is closed");
      const op = OPS[method];
      const schema = (REQUEST_PARAMS as Record<string, z.ZodType>)[method];
      if (!op || !schema) throw new AfsError("INVALID_ARGUMENT", `unknown method ${method}`, { method: true });
      this.limiter?.admit(server);
      const parsed = schema.parse(params ?? {});
      const ctx = this.context(server, entry, note, stage);
      stage.current = "path";
      const result = await abortable(op(this, ctx, parsed as never), entry.controller.signal);
      this.limiter?.spendBytes(server, note.bytes ?? 0);
      this.audit(server, method, note, "ok", started);
      return result;
    } catch (e) {
      const err = e instanceof ZodError ? invalidParams(e) : toAfsError(e);
      const outcome: AuditOutcome =
        stage.current === "path" && (err.code === "INVALID_PATH" || err.code === "PERMISSION_DENIED")
          ? "violation"
          : err.code === "PERMISSION_DENIED"
            ? "denied"
            : "error";
      this.audit(server, method, note, outcome, started, err.code);
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.running.delete(entry);
    }
  }

  /** Ends grants, cancels running operations and uploads, and ends watches: of `server`, or of all. */
  revoke(server?: string): void {
    this.grants.revoke(server);
    const mine = (s: string): boolean => server === undefined || s === server;
    for (const r of this.running) {
      if (mine(r.server)) r.controller.abort(new AfsError("PERMISSION_DENIED", "file access was revoked"));
    }
    this.watches.stopWhere((w) => mine(w.server));
    void this.staging.cancel((s) => mine(s));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.revoke();
    this.unsubscribe?.();
    this.options.consent.close?.();
    await this.staging.close();
  }

  /** Consent narrowed (a policy file changed): stop whatever no longer stands. */
  private async enforce(): Promise<void> {
    const canonical = (p: string): string | null => canonicalKey(this.list, p);
    const stands = async (server: string, key: string, mode: ConsentMode): Promise<boolean> =>
      this.grants.check(server, key, mode, canonical).then(
        () => true,
        () => false,
      );
    for (const r of [...this.running]) {
      for (const k of r.keys) {
        if (!(await stands(r.server, k.key, k.mode))) {
          r.controller.abort(new AfsError("PERMISSION_DENIED", "file access was revoked"));
          break;
        }
      }
    }
    for (const w of this.watches.list())
      if (!(await stands(w.server, w.key, "read"))) this.watches.stopWhere((x) => x === w);
    for (const u of this.staging.entries()) {
      if (!(await stands(u.server, u.key, "write"))) await this.staging.cancel((s, k) => s === u.server && k === u.key);
    }
  }

  private context(server: string, entry: Running, note: Note, stage: { current: string }): BrokerContext {
    const roots = this.list;
    const display = (t: Target): string => displayOf(roots, t);
    const canonical = (p: string): string | null => canonicalKey(roots, p);
    return {
      server,
      signal: entry.controller.signal,
      roots,
      chunkBytes: this.chunkBytes,
      maxListEntries: this.options.maxListEntries ?? 1000,
      staging: this.staging,
      note,
      display,
      authorize: async (given, mode, isEntry = false): Promise<Authorized> => {
        stage.current = "path";
        const target = resolvePath(roots, given);
        note.path ??= display(target);
        if (mode === "write" && target.root.readOnly) {
          throw new AfsError("PERMISSION_DENIED", `root ${target.root.name} is read-only`, { path: display(target) });
        }
        const real = await landing(target, isEntry);
        stage.current = "consent";
        const grant = await this.grants.check(server, keyOf(target), mode, canonical);
        if (keyOf(real) !== keyOf(target)) await this.grants.check(server, keyOf(real), mode, canonical);
        entry.keys.push({ key: keyOf(target), mode }, { key: keyOf(real), mode });
        note.consentId = grant.id;
        entry.controller.signal.throwIfAborted();
        stage.current = "op";
        return { target, real, consentId: grant.id };
      },
    };
  }

  private audit(
    server: string,
    method: string,
    note: Note,
    outcome: AuditOutcome,
    started: number,
    code?: string,
  ): void {
    this.options.audit?.record({
      server,
      method,
      ...note,
      outcome,
      ...(code ? { code } : {}),
      durationMs: Date.now() - started,
    });
  }
}

function invalidParams(e: ZodError): AfsError {
  return new AfsError("INVALID_ARGUMENT", `invalid params: ${issuesText(e.issues)}`, { invalidParams: true });
}

/** The operation's result, or the abort reason as soon as the signal fires (the work is left to finish unseen). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
