// grep results as text lines, the way grep -n prints them: "path:line:text" for a selected line,
// "path-line-text" for a context line, "--" between groups that do not touch. Shared by the CLI
// and the MCP tool's text content.
import type { GrepItems } from "./grep.js";

export function grepText(r: GrepItems): string[] {
  if (r.mode === "files") return r.files;
  if (r.mode === "counts") return r.counts.map((c) => `${c.path}:${c.count}`);
  const out: string[] = [];
  const withContext = r.matches.some((m) => m.before !== undefined || m.after !== undefined);
  if (!withContext) return r.matches.map((m) => `${m.path}:${m.line}:${m.text}`);
  // Per file, every line to print: selected ones win over context from a neighbour.
  let path: string | null = null;
  let shown = new Map<number, { text: string; selected: boolean }>();
  const flush = () => {
    let last: number | null = null;
    for (const [n, l] of [...shown].sort(([a], [b]) => a - b)) {
      // A file's first group follows another file's; a later one follows a gap.
      if (last === null ? out.length > 0 : n > last + 1) out.push("--");
      const sep = l.selected ? ":" : "-";
      out.push(`${path}${sep}${n}${sep}${l.text}`);
      last = n;
    }
  };
  for (const m of r.matches) {
    if (m.path !== path) {
      flush();
      path = m.path;
      shown = new Map();
    }
    const before = m.before ?? [];
    before.forEach((text, i) => {
      const n = m.line - before.length + i;
      if (!shown.get(n)?.selected) shown.set(n, { text, selected: false });
    });
    shown.set(m.line, { text: m.text, selected: true });
    (m.after ?? []).forEach((text, i) => {
      const n = m.line + 1 + i;
      if (!shown.get(n)?.selected) shown.set(n, { text, selected: false });
    });
  }
  flush();
  return out;
}
