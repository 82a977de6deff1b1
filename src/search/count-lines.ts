// How many lines of a text hold a fixed string, from the text's UTF-8 bytes: what `grep -c` (and
// `-l`) of a plain literal needs, with no decoding, no line list and no match objects. The rules are
// grep-bytes' for an exact literal: a line counts once however often it holds the string, lines end
// at LF (a CR before it is the line's end too), and a UTF-8 BOM opening the text is no line's text.
// The string holds neither CR nor LF (countable), so a hit never reaches into a line's end and is
// always a match.

const BOM = [0xef, 0xbb, 0xbf] as const;
const LF = 10;

/** Whether `countLines` answers for this literal exactly: it holds no line-end character. */
export const countable = (literal: string): boolean => literal.length > 0 && !/[\r\n]/.test(literal);

const startsWithBom = (at: (i: number) => number | undefined): boolean =>
  at(0) === BOM[0] && at(1) === BOM[1] && at(2) === BOM[2];

/**
 * Lines of `text` (bytes, or bytes as a latin1 string: grep's views) holding `needle` (its UTF-8
 * bytes, or them as latin1 for a string text), counting at most `max`.
 */
export function countLines(text: Buffer, needle: Buffer, max: number): number;
export function countLines(text: string, needle: string, max: number): number;
export function countLines(text: Buffer | string, needle: Buffer | string, max: number): number {
  const bytes = typeof text !== "string";
  let from = startsWithBom(bytes ? (i) => text[i] : (i) => text.charCodeAt(i)) ? BOM.length : 0;
  const length = needle.length;
  let n = 0;
  while (n < max) {
    // Both overloads: a Buffer's indexOf takes a Buffer or a number, a string's a string.
    const hit = bytes ? text.indexOf(needle as Buffer, from) : text.indexOf(needle as string, from);
    if (hit === -1) break;
    n++;
    const nl = bytes ? text.indexOf(LF, hit + length) : text.indexOf("\n", hit + length);
    if (nl === -1) break;
    from = nl + 1;
  }
  return n;
}
