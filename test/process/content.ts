// Self-checking file contents: a header naming the write, a padding body, and a trailer with the
// SHA-256 of everything above it, so a reader can tell a complete write from a torn or mixed one.
import { sha256 } from "../../src/core/hash.js";

export interface Stamp {
  /** Who wrote it (a worker id or a run number). */
  writer: string;
  /** The writer's sequence number for this write (grows with every write). */
  i: number;
  path: string;
}

/** The marker the replace edits keep at the end of the shared log (see expected-sha-edits). */
export const LOG_END = "<<end>>\n";

const TRAILER = "\nsha256:";

/** A deterministic body of 200 B to ~9 KiB, different for every (writer, i, path). */
export function stampedContent(stamp: Stamp): Buffer {
  const header = JSON.stringify(stamp);
  const seed = sha256(header);
  const size = 200 + (Number.parseInt(seed.slice(0, 6), 16) % 9000);
  const body = `${header}\n${seed.repeat(Math.ceil(size / seed.length)).slice(0, size)}`;
  return Buffer.from(`${body}${TRAILER}${sha256(body)}\n`);
}

/** The stamp of a complete stamped file, or an explanation of why it is not one. */
export function readStamp(data: Buffer): { ok: true; stamp: Stamp } | { ok: false; reason: string } {
  const text = data.toString("utf8");
  const at = text.lastIndexOf(TRAILER);
  if (at < 0) return { ok: false, reason: `no trailer (${data.length} bytes)` };
  const body = text.slice(0, at);
  const claimed = text.slice(at + TRAILER.length).trimEnd();
  if (sha256(body) !== claimed) return { ok: false, reason: `trailer mismatch (${data.length} bytes)` };
  const header = body.slice(0, body.indexOf("\n"));
  const stamp = JSON.parse(header) as Stamp;
  return { ok: true, stamp };
}
