// GET /api/events?workspace=NAME&after=SEQ: a workspace's events as server-sent events, from the
// store's follower, so a change made by any process or machine sharing the store shows within a
// second. `after` (or the browser's Last-Event-ID on reconnect) resumes without a gap.
import type { IncomingMessage, ServerResponse } from "node:http";
import { leavesPin } from "../../access/binding.js";
import { checkAllowed } from "../../access/profiles.js";
import { AfsError } from "../../core/errors.js";
import type { Afs } from "../../workspace/afs.js";
import type { Session } from "../mcp/http/auth.js";
import { offeredBy } from "../mcp/tools.js";
import { sendError } from "./errors.js";
import { SECURITY_HEADERS } from "./headers.js";

// Reading the log is what workspace_activity does; a session that may call it may follow the log.
const ACTIVITY = offeredBy("http").find((t) => t.name === "workspace_activity");

/** Comment lines keep proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

export async function streamEvents(afs: Afs, session: Session, url: URL, req: IncomingMessage, res: ServerResponse) {
  let follower: { close(): void } | null = null;
  try {
    if (ACTIVITY) checkAllowed(session.profile, ACTIVITY);
    const workspace = url.searchParams.get("workspace") ?? session.workspace;
    if (workspace === null) throw new AfsError("INVALID_ARGUMENT", "name the workspace: /api/events?workspace=NAME");
    if (leavesPin(session, workspace)) {
      throw new AfsError("PERMISSION_DENIED", `this token is for workspace ${session.workspace}, not ${workspace}`);
    }
    const info = await afs.workspaces.get(workspace);
    const resume = req.headers["last-event-id"] ?? url.searchParams.get("after");
    const after = resume === null || resume === undefined ? info.revision : Number(resume);
    if (!Number.isInteger(after) || after < 0) {
      throw new AfsError("INVALID_ARGUMENT", `after must be a sequence number (an integer from 0), not ${resume}`);
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    // The position the stream starts from, so the page can fetch the history before it.
    res.write(`event: ready\ndata: ${JSON.stringify({ workspace, after })}\n\n`);
    follower = afs.events.follow(workspace, after, (events) => {
      for (const e of events) res.write(`id: ${e.seq}\nevent: change\ndata: ${JSON.stringify(e)}\n\n`);
    });
    const keepalive = setInterval(() => res.write(": keepalive\n\n"), KEEPALIVE_MS);
    await new Promise<void>((resolve) => res.once("close", () => resolve()));
    clearInterval(keepalive);
  } catch (e) {
    if (!res.headersSent) sendError(res, e, afs.settings.debug);
    else res.end();
  } finally {
    follower?.close();
  }
}
