// Content arguments to bytes: UTF-8 text, or base64 checked strictly (Node's decoder skips junk).
import { AfsError } from "../core/errors.js";

// Checked without a repeated group: a regular expression of 4-character groups over megabytes of
// base64 (a file piped to `afs fs write`) overflowed the regex engine's stack.
const NOT_BASE64 = /[^A-Za-z0-9+/=]/;

const isBase64 = (s: string): boolean => {
  if (s.length % 4 !== 0 || NOT_BASE64.test(s)) return false;
  // Padding: at most two '=', and only at the end.
  const pad = s.indexOf("=");
  return pad === -1 || (pad >= s.length - 2 && (pad === s.length - 1 || s[s.length - 1] === "="));
};

export function contentBytes(content: string, encoding: "text" | "base64" | undefined, path: string): Buffer {
  if (encoding !== "base64") return Buffer.from(content, "utf8");
  const compact = content.replace(/\s+/g, "");
  if (!isBase64(compact)) {
    throw new AfsError("INVALID_ARGUMENT", 'content is not valid base64; encode the bytes, or use encoding "text"', {
      path,
    });
  }
  return Buffer.from(compact, "base64");
}
