// The broker as a library on an official-SDK Client: request handlers for roots/list and every
// files/* method (literal-method schemas from wire.ts) that call BrokerHost.handle, errors as
// McpError through toBrokerError, and the host's notifications forwarded to this client's server.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { toBrokerError } from "./errors.js";
import type { BrokerHost } from "./host.js";
import { BROKER_CAPABILITIES, type BrokerMethod, REQUEST_PARAMS, requestSchema } from "./wire.js";

/**
 * Serves `host` to the server `client` connects to. Call it before client.connect (it declares
 * BROKER_CAPABILITIES then); `server` names the server in consent, limits and audit (default: the
 * name the server gives in initialize).
 */
export function attachBroker(client: Client, host: BrokerHost, server?: string): void {
  try {
    client.registerCapabilities(BROKER_CAPABILITIES);
  } catch {
    // Already connected: the caller declared the capabilities when constructing the client.
  }
  const who = (): string => server ?? client.getServerVersion()?.name ?? "server";
  for (const method of Object.keys(REQUEST_PARAMS) as BrokerMethod[]) {
    client.setRequestHandler(requestSchema(method), async (request, extra) => {
      try {
        return await host.handle(who(), method, request.params ?? {}, extra.signal);
      } catch (e) {
        const err = toBrokerError(e);
        const mcp = new McpError(err.code, err.message, err.data);
        // McpError prefixes "MCP error <code>:"; the receiving SDK adds it again, so send the plain text.
        mcp.message = err.message;
        throw mcp;
      }
    });
  }
  host.onRootsChanged(() => {
    void client.sendRootsListChanged().catch(() => {});
  });
  host.onNotification((s, method, params) => {
    if (s !== who()) return;
    void client.notification({ method, params }).catch(() => {});
  });
}
