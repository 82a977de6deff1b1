// MIME types of workspace files by name (mime-db's table), with the content deciding what a name
// cannot: text without a known type is text/plain, anything else application/octet-stream.
import { lookup } from "mime-types";
import { baseName } from "../../../core/paths.js";

/** The type a file's name says, or undefined when the name says nothing (a list shows no type then). */
export function mimeTypeByName(path: string): string | undefined {
  return lookup(baseName(path)) || undefined;
}

/** The type of a file whose content has been read: by name, else by whether it decoded as text. */
export const mimeTypeOf = (path: string, text: boolean): string =>
  mimeTypeByName(path) ?? (text ? "text/plain" : "application/octet-stream");
