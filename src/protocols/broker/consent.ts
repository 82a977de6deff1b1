// files/consent: the requested paths are resolved like any other path (a refused one is simply not
// granted), the ConsentProvider decides, and what it approved, clamped to what was asked and to
// read-only roots, becomes a grant with an id.

import { join } from "node:path";
import type { z } from "zod";
import { type ApprovedPath, covers } from "../../access/consent.js";
import { segments } from "../../core/paths.js";
import type { BrokerContext, Gate } from "./context.js";
import { keyOf, landing, resolvePath, type Target } from "./paths.js";
import type { BrokerRoot } from "./roots.js";
import type { consentParams, consentResult } from "./wire.js";

export async function consentFor(
  gate: Gate,
  ctx: BrokerContext,
  p: z.infer<typeof consentParams>,
): Promise<z.infer<typeof consentResult>> {
  const asked: Target[] = [];
  for (const given of p.requestedPaths) {
    try {
      const t = resolvePath(gate.roots, given);
      await landing(t); // a path that leads out of its root is never put to the person
      asked.push(t);
    } catch {}
  }
  ctx.note.path = p.requestedPaths.length === 1 ? (p.requestedPaths[0] as string) : `${p.requestedPaths.length} paths`;
  if (asked.length === 0) {
    return {
      granted: false,
      approvedPaths: [],
      message: "none of the requested paths lies inside a root; list the roots with roots/list",
    };
  }
  const keys = asked.map(keyOf);
  const decision = await gate.grants.provider.decide(
    {
      server: ctx.server,
      message: p.message,
      paths: keys,
      hostPaths: asked.map((t) => (t.root.dir ? join(t.root.dir, ...segments(t.path)) : null)),
    },
    gate.canonical,
    ctx.signal,
  );
  ctx.signal.throwIfAborted();
  const approved: ApprovedPath[] = [];
  for (const a of decision.approved) {
    // Never wider than asked, never write on a read-only root.
    if (!keys.some((k) => covers(k, a.path))) continue;
    const root = gate.roots.find((r) => covers(r.name, a.path)) as BrokerRoot;
    approved.push({ path: a.path, mode: root.readOnly ? "read" : a.mode });
  }
  if (approved.length === 0) {
    return { granted: false, approvedPaths: [], message: decision.reason ?? "the request was not granted" };
  }
  const grant = gate.grants.add(ctx.server, approved, decision.grantId);
  ctx.note.consentId = grant.id;
  const shown = approved.map((a) => {
    const root = gate.roots.find((r) => covers(r.name, a.path)) as BrokerRoot;
    const rest = a.path.slice(root.name.length);
    return gate.display({ root, path: rest === "" ? "/" : rest });
  });
  const narrowed = decision.reason ? { message: decision.reason } : {};
  return { granted: true, approvedPaths: shown, consentId: grant.id, ...narrowed };
}
