// A JSON-RPC message channel over a pair of byte streams, one message per line (MCP's stdio
// framing). The proxy reads messages from it and, when it changes nothing, writes the very line it
// read, so forwarded messages go out byte for byte as they came in.
import type { Readable, Writable } from "node:stream";

export type JsonRpcId = string | number;
export interface JsonRpcMessage {
  jsonrpc: "2.0";
  id?: JsonRpcId | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface Channel {
  /** Sends a message; `line` (the message's own JSON text, as received) is written as is when given. */
  send(msg: JsonRpcMessage, line?: string): void;
  onMessage(cb: (msg: JsonRpcMessage, line: string) => void): void;
  /** Called once, when the far end stops sending (end of input) or the channel is closed. */
  onClose(cb: () => void): void;
  close(): void;
}

/** A channel reading newline-delimited JSON from `input` and writing it to `output`. */
export function ndjsonChannel(
  input: Readable,
  output: Writable,
  onBadLine: (line: string) => void = () => {},
): Channel {
  const listeners: Array<(msg: JsonRpcMessage, line: string) => void> = [];
  const closers: Array<() => void> = [];
  let closed = false;
  const finish = (): void => {
    if (closed) return;
    closed = true;
    for (const cb of closers) cb();
  };
  // Lines of a few MiB (1 MiB chunks in base64) arrive in many pieces: keep the pieces, join once.
  let pieces: Buffer[] = [];
  const deliver = (buf: Buffer): void => {
    const line = buf.toString("utf8").replace(/\r$/, "");
    if (line.trim() === "") return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      onBadLine(line);
      return;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg)) {
      onBadLine(line);
      return;
    }
    for (const cb of listeners) cb(msg as JsonRpcMessage, line);
  };
  input.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      pieces.push(chunk.subarray(start, nl));
      const whole = pieces.length === 1 ? (pieces[0] as Buffer) : Buffer.concat(pieces);
      pieces = [];
      deliver(whole);
      start = nl + 1;
    }
    if (start < chunk.length) pieces.push(chunk.subarray(start));
  });
  input.once("end", finish);
  input.once("close", finish);
  input.once("error", finish);
  // A far end that went away makes writes fail with EPIPE; that is the close, not a crash.
  output.on("error", finish);
  return {
    send(msg, line) {
      if (closed || output.destroyed) return;
      output.write(`${line ?? JSON.stringify(msg)}\n`);
    },
    onMessage(cb) {
      listeners.push(cb);
    },
    onClose(cb) {
      if (closed) cb();
      else closers.push(cb);
    },
    close() {
      finish();
    },
  };
}
