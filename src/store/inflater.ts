// Inflates many small raw-deflate values (blob-codec.ts) with one native zlib stream, reset between
// them. inflateRawSync builds a Transform stream, runs inflateInit and allocates its 32 KiB window
// for every call, then frees it all: for a 2 KiB blob that cost more than the inflating (~40% of a
// cold `grep -c` over 200k files' inflate time).
//
// It drives the stream's native handle (`_handle.writeSync` and `reset`, what zlib's own sync
// functions call), which Node does not document: where the handle is not as expected, or a value
// does not inflate exactly, `inflate` answers null and the caller decodes as before (blob-codec's
// decode), which also words any corruption error. So a Node that changes its internals is slower,
// never wrong.
import { constants, InflateRaw } from "node:zlib";

/** The native handle of a zlib stream, as Node 18–22 have it. */
interface NativeZlib {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOffset: number,
    inLength: number,
    out: Uint8Array,
    outOffset: number,
    outLength: number,
  ): void;
  reset(): void;
}

interface Native {
  stream: InflateRaw;
  handle: NativeZlib;
  /** [available output, available input] after each write. */
  state: Uint32Array;
}

export class Inflater {
  private native: Native | null | undefined;
  private scratch = Buffer.allocUnsafe(64 * 1024);

  /**
   * The `size` bytes that the complete raw deflate stream `input` holds, in a buffer reused by the
   * next call (copy what must outlive it); null when this inflater cannot tell them exactly.
   */
  inflate(input: Uint8Array, size: number): Buffer | null {
    const native = this.open();
    if (native === null) return null;
    // One byte of room more than expected: a stream that holds more fills it, and is refused.
    if (this.scratch.byteLength < size + 1)
      this.scratch = Buffer.allocUnsafe(Math.max(size + 1, 2 * this.scratch.byteLength));
    const out = this.scratch;
    let failed = false;
    try {
      native.handle.writeSync(constants.Z_FINISH, input, 0, input.byteLength, out, 0, size + 1);
    } catch {
      failed = true;
    }
    // zlib reports a bad stream through the handle's error callback, which destroys the stream at
    // once (zlib's rule: no recovery); a new one is made next time.
    if (failed || native.stream.destroyed) {
      native.stream.close();
      this.native = undefined;
      return null;
    }
    const [availOut, availIn] = native.state;
    native.handle.reset();
    const written = size + 1 - (availOut as number);
    return availIn === 0 && written === size ? out.subarray(0, size) : null;
  }

  /** Frees the native stream (it is also freed with this object, by the garbage collector). */
  close(): void {
    this.native?.stream.close();
    this.native = null;
  }

  private open(): Native | null {
    if (this.native !== undefined) return this.native;
    const stream = new InflateRaw();
    const internals = stream as unknown as { _handle?: Partial<NativeZlib>; _writeState?: unknown };
    const handle = internals._handle;
    const state = internals._writeState;
    if (
      typeof handle?.writeSync !== "function" ||
      typeof handle.reset !== "function" ||
      !(state instanceof Uint32Array) ||
      state.length < 2
    ) {
      stream.close();
      this.native = null;
      return null;
    }
    // The error a destroyed stream emits later is seen above, when it happens, through `destroyed`.
    stream.on("error", () => undefined);
    this.native = { stream, handle: handle as NativeZlib, state };
    return this.native;
  }
}
