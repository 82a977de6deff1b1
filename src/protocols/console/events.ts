// GET /api/events?workspace=NAME&after=SEQ: a workspace's events as server-sent events, from the
// store's follower, so a change made by any process or machine sharing the store shows within a
// second. `after` (or the browser's Last-Event-ID on reconnect) resumes without a gap.
// GET /api/events without workspace (a session not pinned to one): every workspace's events, new
// workspaces picked up as they appear; a pinned token's session gets its own workspace's.
import type { IncomingMessage, ServerResponse } from "node:http";
import { leavesPin } from "../../access/binding.js";
import { checkAllowed } from "../../access/profiles.js";
import { AfsError } from "../../core/errors.js";
import { type EventRecord, outcomeOf } from "../../core/event.js";
import type { Afs } from "../../workspace/afs.js";
import type { Session } from "../mcp/http/auth.js";
import { offeredBy } from "../mcp/tools.js";
import { sendError } from "./errors.js";
import { SECURITY_HEADERS } from "./headers.js";

// Reading the log is what workspace_activity does; a session that may call it may follow the log.
const ACTIVITY = offeredBy("http").find((t) => t.name === "workspace_activity");

/** Comment lines keep proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;
/** How often an open stream checks that its token still works (revoked, expired: the stream ends). */
const RECHECK_MS = 2000;

/** One event as the stream sends it: the record with what it did (as workspace_activity says). */
const changeData = (e: EventRecord): string => JSON.stringify({ ...e, outcome: outcomeOf(e) });

export async function streamEvents(
  afs: Afs,
  session: Session,
  url: URL,
  req: IncomingMessage,
  res: ServerResponse,
  stillValid: () => Promise<boolean> = async () => true,
) {
  let follower: { close(): void } | null = null;
  let timers: NodeJS.Timeout[] = [];
  try {
    if (ACTIVITY) checkAllowed(session.profile, ACTIVITY);
    const named = url.searchParams.get("workspace") ?? (session.pinned ? session.workspace : null);
    if (named === null) {
      if (url.searchParams.has("after")) {
        throw new AfsError("INVALID_ARGUMENT", "after needs a workspace: /api/events?workspace=NAME&after=SEQ");
      }
      // Every workspace: where each log stands now, then whatever is appended to any of them.
      const positions: Record<string, number> = {};
      for (const w of await afs.workspaces.list()) positions[w.name] = w.revision;
      open(res);
      // No `id:` lines: one number cannot resume many logs. A reconnecting page gets a fresh ready
      // and reads the history up to it again, as it did first.
      res.write(`event: ready\ndata: ${JSON.stringify({ workspace: null, after: positions })}\n\n`);
      follower = afs.events.followEvery(
        (events) => {
          for (const e of events) res.write(`event: change\ndata: ${changeData(e)}\n\n`);
        },
        { from: positions },
      );
    } else {
      const workspace = named;
      if (leavesPin(session, workspace)) {
        throw new AfsError("PERMISSION_DENIED", `this token is for workspace ${session.workspace}, not ${workspace}`);
      }
      const info = await afs.workspaces.get(workspace);
      const resume = req.headers["last-event-id"] ?? url.searchParams.get("after");
      const after = resume === null || resume === undefined ? info.revision : Number(resume);
      if (!Number.isInteger(after) || after < 0) {
        throw new AfsError("INVALID_ARGUMENT", `after must be a sequence number (an integer from 0), not ${resume}`);
      }
      open(res);
      // The position the stream starts from, so the page can fetch the history before it.
      res.write(`event: ready\ndata: ${JSON.stringify({ workspace, after })}\n\n`);
      follower = afs.events.follow(workspace, after, (events) => {
        for (const e of events) res.write(`id: ${e.seq}\nevent: change\ndata: ${changeData(e)}\n\n`);
      });
    }
    timers.push(setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS));
    timers.push(
      setInterval(() => {
        stillValid().then(
          (ok) => ok || res.end(),
          () => undefined,
        );
      }, RECHECK_MS),
    );
    await new Promise<void>((resolve) => (res.closed ? resolve() : res.once("close", () => resolve())));
  } catch (e) {
    if (!res.headersSent) sendError(res, e, afs.settings.debug);
    else res.end();
  } finally {
    for (const t of timers) clearInterval(t);
    timers = [];
    follower?.close();
  }
}

function open(res: ServerResponse): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    Connection: "keep-alive",
    "X-Accel-Buffering": "no",
  });
  // A dropped stream (a server restart, a proxy) is reopened after a second, not the browser's 3.
  res.write("retry: 1000\n\n");
}
