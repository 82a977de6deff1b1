// One file's unified diff drawn as a table, unified or side by side. The patch is parsed by the
// `diff` library (parsePatch); every line is agents' text and goes into the page as text only.
import { parsePatch, type StructuredPatchHunk } from "diff";
import { useState } from "preact/hooks";
import "./checkpoints.css";

export type DiffMode = "unified" | "split";

/** Lines drawn before a "show all" button: one huge file must not stall the page. */
const FIRST_LINES = 2000;

interface Row {
  kind: "ctx" | "del" | "add" | "note";
  old: number | null;
  new: number | null;
  text: string;
}

/** The hunks of the first file in `patch`; an unparsable patch comes back as no hunks. */
export function hunksOf(patch: string): StructuredPatchHunk[] {
  try {
    return parsePatch(patch)[0]?.hunks ?? [];
  } catch {
    return [];
  }
}

function rowsOf(hunk: StructuredPatchHunk): Row[] {
  const rows: Row[] = [];
  let o = hunk.oldStart;
  let n = hunk.newStart;
  for (const line of hunk.lines) {
    const sign = line[0];
    const text = line.slice(1);
    if (sign === "-") rows.push({ kind: "del", old: o++, new: null, text });
    else if (sign === "+") rows.push({ kind: "add", old: null, new: n++, text });
    else if (sign === "\\") rows.push({ kind: "note", old: null, new: null, text: line });
    else rows.push({ kind: "ctx", old: o++, new: n++, text });
  }
  return rows;
}

const SIGN: Record<Row["kind"], string> = { ctx: " ", del: "-", add: "+", note: "" };

function UnifiedRows(props: { rows: Row[] }) {
  return (
    <>
      {props.rows.map((r, i) => (
        <tr key={i} class={`line ${r.kind}`}>
          <td class="num">{r.old ?? ""}</td>
          <td class="num">{r.new ?? ""}</td>
          <td class="code">
            <span class="sign" aria-hidden="true">
              {SIGN[r.kind]}
            </span>
            {r.text}
          </td>
        </tr>
      ))}
    </>
  );
}

/** Pairs each run of removed lines with the added lines after it, row by row. */
function splitRows(rows: Row[]): [Row | null, Row | null][] {
  const out: [Row | null, Row | null][] = [];
  for (let i = 0; i < rows.length; ) {
    const r = rows[i] as Row;
    if (r.kind !== "del" && r.kind !== "add") {
      out.push([r, r]);
      i++;
      continue;
    }
    const dels: Row[] = [];
    const adds: Row[] = [];
    while (i < rows.length && rows[i]?.kind === "del") dels.push(rows[i++] as Row);
    while (i < rows.length && rows[i]?.kind === "add") adds.push(rows[i++] as Row);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) out.push([dels[k] ?? null, adds[k] ?? null]);
  }
  return out;
}

function SplitRows(props: { rows: Row[] }) {
  const side = (r: Row | null, which: "old" | "new") =>
    r === null ? (
      <>
        <td class="num empty" />
        <td class="code empty" />
      </>
    ) : (
      <>
        <td class={`num ${r.kind}`}>{r[which] ?? ""}</td>
        <td class={`code ${r.kind}`}>
          <span class="sign" aria-hidden="true">
            {SIGN[r.kind]}
          </span>
          {r.text}
        </td>
      </>
    );
  return (
    <>
      {splitRows(props.rows).map(([a, b], i) => (
        <tr key={i} class="line">
          {side(a && a.kind !== "add" ? a : null, "old")}
          {side(b && b.kind !== "del" ? b : null, "new")}
        </tr>
      ))}
    </>
  );
}

/** A hunk side's start as the patch says it: jsdiff's parser moves an empty side's 0 to 1 (git shows -0,0). */
const startOf = (start: number, lines: number): number => (lines === 0 ? start - 1 : start);

/** A patch's hunks as a table; `label` names the file for screen readers. */
export function PatchView(props: { patch: string; mode: DiffMode; label: string }) {
  const [all, setAll] = useState(false);
  const hunks = hunksOf(props.patch);
  if (hunks.length === 0) return <p class="muted">No line changes.</p>;
  let budget = all ? Number.POSITIVE_INFINITY : FIRST_LINES;
  let hidden = 0;
  const cols = props.mode === "split" ? 4 : 3;
  return (
    <div class="patch-scroll">
      <table class={`patch ${props.mode}`} aria-label={`Changes in ${props.label}`}>
        {/* Column widths up front (table-layout: fixed): the browser lays out a table without measuring every line. */}
        <colgroup>
          {props.mode === "split" ? (
            <>
              <col class="num" />
              <col />
              <col class="num" />
              <col />
            </>
          ) : (
            <>
              <col class="num" />
              <col class="num" />
              <col />
            </>
          )}
        </colgroup>
        {hunks.map((h, i) => {
          let rows = rowsOf(h);
          if (rows.length > budget) {
            hidden += rows.length - Math.max(budget, 0);
            rows = rows.slice(0, Math.max(budget, 0));
          }
          budget -= rows.length;
          if (rows.length === 0) return null;
          return (
            <tbody key={i}>
              <tr class="hunk">
                <td colSpan={cols}>
                  @@ -{startOf(h.oldStart, h.oldLines)},{h.oldLines} +{startOf(h.newStart, h.newLines)},{h.newLines} @@
                </td>
              </tr>
              {props.mode === "split" ? <SplitRows rows={rows} /> : <UnifiedRows rows={rows} />}
            </tbody>
          );
        })}
      </table>
      {hidden > 0 && (
        <button type="button" onClick={() => setAll(true)}>
          Show {hidden} more lines
        </button>
      )}
    </div>
  );
}

/** The unified / side-by-side switch. */
export function ModeSwitch(props: { mode: DiffMode; onChange: (mode: DiffMode) => void }) {
  return (
    <fieldset class="mode">
      <legend>View</legend>
      {(["unified", "split"] as const).map((m) => (
        <label key={m}>
          <input type="radio" name="diff-mode" checked={props.mode === m} onChange={() => props.onChange(m)} />
          {m === "unified" ? "Unified" : "Side by side"}
        </label>
      ))}
    </fieldset>
  );
}
