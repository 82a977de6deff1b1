// Content addressing: every blob and tree is named by the SHA-256 of its bytes (lowercase hex).
import { createHash } from "node:crypto";

export type Hash = string;

export const sha256 = (data: Uint8Array | string): Hash => createHash("sha256").update(data).digest("hex");

/** The hash of zero bytes, used for empty files without touching the store. */
export const EMPTY_SHA256: Hash = sha256(new Uint8Array(0));

export const isHash = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);
