// `afs serve`: MCP over Streamable HTTP at /mcp and the web console at /, with bearer tokens (or
// --auth none on loopback for local development); `afs console`: the console alone for this
// machine's user (loopback, no auth). Each runs until interrupted; addresses and warnings go to stderr.
import { spawn } from "node:child_process";
import { type Command, Option } from "commander";
import { bindSession } from "../../access/binding.js";
import { resolveLimits } from "../../access/limits.js";
import { PROFILES, parseProfile } from "../../access/profiles.js";
import { AfsError } from "../../core/errors.js";
import { globals, type Io, workspaceOption } from "../context.js";
import { leaf } from "./leaf.js";

interface ServeFlags {
  host: string;
  port: string;
  auth: "token" | "none";
  profile: string;
  allowedHost: string[];
  allowedOrigin: string[];
  publicUrl?: string;
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerServe(program: Command, io: Io): void {
  registerConsole(program, io);
  workspaceOption(leaf(program, "serve", "serve the afs tools over MCP at /mcp and the web console at /", false))
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--port <port>", "port to listen on (0 picks a free one)", "8091")
    .addOption(
      new Option("--auth <mode>", "token: bearer tokens; none: no auth, loopback only")
        .choices(["token", "none"])
        .default("token"),
    )
    .option("--profile <profile>", `with --auth none, what clients may do: ${PROFILES.join(", ")}`, "admin-rw")
    .option("--allowed-host <name>", "another Host name to answer (repeatable)", collect, [])
    .option(
      "--allowed-origin <origin>",
      "a browser Origin to accept, e.g. https://app.example (repeatable)",
      collect,
      [],
    )
    .option("--public-url <url>", "the server's URL as clients see it (behind a proxy)")
    .action((flags: ServeFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const port = parsePort(flags.port);
        const profile = parseProfile(flags.profile);
        // Only the --auth none session uses it; a token brings its own workspace.
        const workspace = await bindSession(afs, {
          profile,
          requested: globals(cmd).workspace,
          fallback: false,
          env: io.env,
        });
        // Loaded here: other commands should not pay for the HTTP server and the MCP SDK.
        const { serveHttp } = await import("../../protocols/mcp/http/server.js");
        const serving = await serveHttp({
          afs,
          host: flags.host,
          port,
          auth: flags.auth,
          profile,
          workspace,
          allowedHosts: flags.allowedHost,
          allowedOrigins: flags.allowedOrigin,
          publicUrl: flags.publicUrl,
          limits: resolveLimits({}, afs.settings.env),
        });
        if (flags.auth === "none") {
          io.warn(
            `afs serve: WARNING --auth none: no authentication, for local development only (profile ${profile})\n`,
          );
        }
        io.warn(`afs serve: listening on ${serving.url} (console: ${serving.consoleUrl})\n`);
        await serving.closed;
      }),
    );
}

interface ConsoleFlags {
  port: string;
  open?: boolean;
}

/**
 * `afs console`: the console on loopback with no authentication, as `afs serve --auth none` is,
 * for the person at this machine. Anyone who can reach the port acts as admin-rw, so loopback only.
 */
function registerConsole(program: Command, io: Io): void {
  leaf(program, "console", "open the web console on this machine (loopback, no auth)", false)
    .option("--port <port>", "port to listen on (0 picks a free one)", "8092")
    .option("--open", "open the console in the default browser")
    .action((flags: ConsoleFlags, cmd: Command) =>
      io.withAfs(cmd, async (afs) => {
        const port = parsePort(flags.port);
        const { serveHttp } = await import("../../protocols/mcp/http/server.js");
        const serving = await serveHttp({
          afs,
          host: "127.0.0.1",
          port,
          auth: "none",
          profile: "admin-rw",
          workspace: null,
          allowedHosts: [],
          allowedOrigins: [],
          limits: resolveLimits({}, afs.settings.env),
        });
        io.write(`${serving.consoleUrl}\n`);
        io.warn("afs console: serving this machine's user only (127.0.0.1, no auth); stop with Ctrl-C\n");
        if (flags.open) openBrowser(serving.consoleUrl, io);
        await serving.closed;
      }),
    );
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new AfsError("INVALID_ARGUMENT", `--port must be 0-65535; got ${value}`);
  }
  return port;
}

/** The desktop's opener (xdg-open, open, start); a missing one is said, not fatal. */
function openBrowser(url: string, io: Io): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  const child = spawn(command, args, { stdio: "ignore", detached: true });
  child.on("error", () => io.warn(`afs console: could not open a browser (${command}); open ${url}\n`));
  child.unref();
}
