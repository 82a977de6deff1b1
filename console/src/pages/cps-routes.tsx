// The addresses of the checkpoints, diff and history pages (matchers for routes.tsx's table).
import type { Matcher } from "../routes.js";
import { CheckpointsPage } from "./checkpoints.js";
import { DiffPage } from "./diff.js";
import { HistoryPage } from "./history.js";

/** `/ws/NAME/checkpoints` */
export const checkpointsRoute: Matcher = ([ws, name, page, ...rest]) =>
  ws === "ws" && name !== undefined && page === "checkpoints" && rest.length === 0
    ? { title: `Checkpoints · ${name}`, view: <CheckpointsPage workspace={name} /> }
    : null;

/** `/ws/NAME/diff?from=A&to=B&view=split` */
export const diffRoute: Matcher = ([ws, name, page, ...rest], location) =>
  ws === "ws" && name !== undefined && page === "diff" && rest.length === 0
    ? { title: `Diff · ${name}`, view: <DiffPage workspace={name} query={location.query} /> }
    : null;

/** `/ws/NAME/history/PATH` */
export const historyRoute: Matcher = ([ws, name, page, ...rest], location) =>
  ws === "ws" && name !== undefined && page === "history" && rest.length > 0
    ? {
        title: `History · /${rest.join("/")}`,
        view: <HistoryPage workspace={name} path={`/${rest.join("/")}`} query={location.query} />,
      }
    : null;
