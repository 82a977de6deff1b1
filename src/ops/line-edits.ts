// Line-level edits on a "\n"-normalized body, shared by insert, delete_lines and patch. A body is
// its lines plus whether the last one ends with a newline; edits keep that status, so a file
// without a trailing newline still has none afterwards.
import { AfsError } from "../core/errors.js";
import { splitLines } from "../core/text.js";

export interface LineDoc {
  lines: string[];
  trailingNewline: boolean;
}

export const toDoc = (body: string): LineDoc => ({ lines: splitLines(body), trailingNewline: body.endsWith("\n") });

export const fromDoc = (doc: LineDoc): string =>
  doc.lines.length === 0 ? "" : doc.lines.join("\n") + (doc.trailingNewline ? "\n" : "");

/** Lines of a text argument: "a\nb\n" and "a\nb" are both two lines. */
export const argLines = (text: string): string[] => splitLines(text);

/** Inserts `text` as whole lines after line `after` (0 = before the first line). */
export function insertAfter(doc: LineDoc, after: number, text: string): LineDoc {
  const lines = [...doc.lines.slice(0, after), ...argLines(text), ...doc.lines.slice(after)];
  // An empty file takes its ending from the inserted text; otherwise the file keeps its own.
  const trailingNewline = doc.lines.length === 0 ? text.endsWith("\n") : doc.trailingNewline;
  return { lines, trailingNewline };
}

/** Replaces lines start..end (1-based, inclusive) with the lines of `text` ("" deletes them). */
export function replaceRange(doc: LineDoc, start: number, end: number, text: string): LineDoc {
  const lines = [...doc.lines.slice(0, start - 1), ...argLines(text), ...doc.lines.slice(end)];
  return { lines, trailingNewline: doc.trailingNewline };
}

/** The text of lines start..end without the final newline, for comparing with an `old` argument. */
export const rangeText = (doc: LineDoc, start: number, end: number): string =>
  doc.lines.slice(start - 1, end).join("\n");

/** An `old` argument compared with whole lines: one trailing newline is not significant. */
export const sameLines = (doc: LineDoc, start: number, end: number, old: string): boolean =>
  rangeText(doc, start, end) === (old.endsWith("\n") ? old.slice(0, -1) : old);

/** Checks an insertion point: 0..total, or -1 for the end. Returns the concrete line. */
export function insertionPoint(path: string, doc: LineDoc, line: number, name = "line"): number {
  const total = doc.lines.length;
  if (line === -1) return total;
  if (!Number.isInteger(line) || line < 0) {
    throw new AfsError("INVALID_ARGUMENT", `${name} must be 0 (beginning), a line number, or -1 (end of file)`, {
      path,
    });
  }
  if (line > total) {
    throw new AfsError(
      "INVALID_ARGUMENT",
      `${name} ${line} is past the end of ${path}, which has ${total} line${total === 1 ? "" : "s"}; use -1 to insert at the end`,
      { path, total_lines: total },
    );
  }
  return line;
}

/** Checks a 1-based inclusive range that must lie inside the file (`end` -1 = last line). */
export function lineRange(
  path: string,
  doc: LineDoc,
  start: number,
  end: number,
  names: [string, string] = ["start", "end"],
): { start: number; end: number } {
  const total = doc.lines.length;
  const [s, e] = names;
  const of = `${path} has ${total} line${total === 1 ? "" : "s"}`;
  if (!Number.isInteger(start) || start < 1) throw new AfsError("INVALID_ARGUMENT", `${s} must be 1 or more`, { path });
  if (start > total) {
    throw new AfsError("INVALID_ARGUMENT", `${s} ${start} is past the end: ${of}`, { path, total_lines: total });
  }
  const last = end === -1 ? total : end;
  if (!Number.isInteger(last) || last < start) {
    throw new AfsError("INVALID_ARGUMENT", `${e} must be -1 (end of file) or at least ${s} (${start})`, { path });
  }
  if (last > total) {
    throw new AfsError("INVALID_ARGUMENT", `${e} ${last} is past the end: ${of}; use -1 for the last line`, {
      path,
      total_lines: total,
    });
  }
  return { start, end: last };
}
