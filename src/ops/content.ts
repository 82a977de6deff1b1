// Content arguments to bytes: UTF-8 text, or base64 checked strictly (Node's decoder skips junk).
import { AfsError } from "../core/errors.js";

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function contentBytes(content: string, encoding: "text" | "base64" | undefined, path: string): Buffer {
  if (encoding !== "base64") return Buffer.from(content, "utf8");
  const compact = content.replace(/\s+/g, "");
  if (!BASE64.test(compact)) {
    throw new AfsError("INVALID_ARGUMENT", 'content is not valid base64; encode the bytes, or use encoding "text"', {
      path,
    });
  }
  return Buffer.from(compact, "base64");
}
