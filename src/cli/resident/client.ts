// The client side of the resident afs: hands a command line to it over its Unix socket and copies
// the answer to this process's stdout and stderr as it arrives. Runs in the executable's loader,
// before any bundle loads, so it uses Node's own modules only.
import { connect } from "node:net";
import { FRAME, type ResidentRequest } from "./socket.js";

/** Output frames go to a stream as they arrive; an exit frame ends the answer with a status. */
interface Outputs {
  stdout: (data: Uint8Array) => boolean;
  stderr: (data: Uint8Array) => boolean;
}

const processOutputs: Outputs = {
  stdout: (data) => process.stdout.write(data),
  stderr: (data) => process.stderr.write(data),
};

/**
 * Sends one request and copies the answer's frames. Resolves with the exit status, or undefined
 * when nothing answered (no resident afs, or it went away before writing anything): the caller
 * then does the work itself. One that dies mid-answer is a failure, not a silent retry, since part
 * of the answer is already out.
 */
export function ask(
  socket: string,
  request: ResidentRequest,
  out: Outputs = processOutputs,
): Promise<number | undefined> {
  return new Promise((resolve) => {
    const conn = connect(socket);
    let settled = false;
    let wrote = false;
    const settle = (status: number | undefined): void => {
      if (settled) return;
      settled = true;
      conn.destroy();
      resolve(status);
    };
    // The frame being read: its 5-byte head, then its body (streamed on, except the exit status).
    let head = Buffer.alloc(0);
    let kind = 0;
    let left = 0;
    let status = "";
    conn.on("connect", () => conn.write(`${JSON.stringify(request)}\n`));
    conn.on("data", (chunk: Buffer) => {
      let at = 0;
      while (at < chunk.length && !settled) {
        if (left === 0 && head.length < 5) {
          const take = Math.min(5 - head.length, chunk.length - at);
          head = Buffer.concat([head, chunk.subarray(at, at + take)]);
          at += take;
          if (head.length < 5) break;
          kind = head[0] as number;
          left = head.readUInt32BE(1);
          head = Buffer.alloc(0);
          if (kind === FRAME.exit && left === 0) settle(0);
          continue;
        }
        const body = chunk.subarray(at, at + left);
        at += body.length;
        left -= body.length;
        if (kind === FRAME.exit) {
          status += body.toString("latin1");
          if (left === 0) settle(Number.parseInt(status, 10) || 0);
        } else if (body.length > 0) {
          wrote = true;
          // A slow reader of our stdout slows the resident afs down rather than filling memory.
          const more = kind === FRAME.stderr ? out.stderr(body) : out.stdout(body);
          if (!more) {
            conn.pause();
            (kind === FRAME.stderr ? process.stderr : process.stdout).once("drain", () => conn.resume());
          }
        }
      }
    });
    const lost = (): void => {
      if (settled) return;
      if (wrote)
        out.stderr(Buffer.from("afs: the resident afs stopped mid-answer; run the command again [IO_ERROR]\n"));
      settle(wrote ? 1 : undefined);
    };
    conn.on("error", lost);
    conn.on("close", lost);
    // A reader that stops early (`afs fs grep x | head`) is not a failure, as without the resident afs.
    const closed = (e: NodeJS.ErrnoException): void => {
      if (e.code === "EPIPE") settle(0);
    };
    process.stdout.on("error", closed);
  });
}

/** Runs a command line in the resident afs (see ask). */
export function runResident(socket: string, argv: readonly string[]): Promise<number | undefined> {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    // A directory deleted under the shell: this process makes of it what it can.
    return Promise.resolve(undefined);
  }
  // The whole environment: a command also reads TZ (times), OPENAI_API_KEY (query), …
  return ask(socket, { kind: "run", argv: [...argv], cwd, env: process.env });
}

/**
 * Starts a resident afs in the background (detached, no terminal, its own session), for the next
 * command. A second one started at the same moment finds the socket taken and leaves.
 */
export async function startResident(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Loaded here: every afs process runs this module, and only a few start a process (~2 ms).
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, "daemon", "run"], {
    // Never a training run of the build's code caches, whatever the process that starts it is. No
    // TZ: it runs in the system's time zone, and prints times in a client's when the client has one.
    env: { ...env, AFS_WRITE_CODE_CACHE: undefined, TZ: undefined },
    detached: true,
    stdio: "ignore",
    // Not the caller's directory: a resident process should not keep a directory busy (or mounted).
    cwd: "/",
  });
  child.on("error", () => {});
  child.unref();
}
