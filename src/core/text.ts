// Text facts the file operations share: binary detection, line endings, BOM.

const UTF8_BOM = "\uFEFF";
/** Bytes looked at for a NUL that marks a file binary. */
export const SNIFF_BYTES = 8192;
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 text, or returns null for binary content (a NUL in the first 8 KiB or invalid UTF-8). */
export function decodeText(data: Uint8Array): string | null {
  const head = data.subarray(0, SNIFF_BYTES);
  if (head.includes(0)) return null;
  try {
    return decoder.decode(data);
  } catch {
    return null;
  }
}

export interface TextShape {
  bom: boolean;
  eol: "\n" | "\r\n";
  /** Text without the BOM, with line endings normalized to "\n". */
  body: string;
}

/** Splits a text into its shape (BOM, dominant line ending) and a "\n"-normalized body. */
export function shapeOf(text: string): TextShape {
  const bom = text.startsWith(UTF8_BOM);
  const raw = bom ? text.slice(1) : text;
  const crlf = (raw.match(/\r\n/g) ?? []).length;
  const lf = (raw.match(/\n/g) ?? []).length - crlf;
  const eol = crlf > 0 && crlf >= lf ? "\r\n" : "\n";
  return { bom, eol, body: eol === "\r\n" ? raw.replace(/\r\n/g, "\n") : raw };
}

/** Puts a normalized body back into the file's original shape. */
export function withShape(body: string, shape: Pick<TextShape, "bom" | "eol">): string {
  const text = shape.eol === "\r\n" ? body.replace(/\r?\n/g, "\r\n") : body;
  return shape.bom ? UTF8_BOM + text : text;
}

/** Lines of a normalized body; a trailing newline does not start an extra empty line. */
export function splitLines(body: string): string[] {
  if (body === "") return [];
  const lines = body.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Bytes of `buf` that end on a whole UTF-8 character (a cut-off sequence at the end dropped). */
export function wholeCharacters(buf: Uint8Array): number {
  let i = buf.length - 1;
  let back = 0;
  while (i >= 0 && back < 3 && ((buf[i] as number) & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i < 0) return buf.length;
  const lead = buf[i] as number;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return buf.length - i < need ? i : buf.length;
}
