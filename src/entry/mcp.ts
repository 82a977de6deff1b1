// Public surface `afs/mcp`: the afs tools as an MCP server over any transport of the official SDK
// (stdio, Streamable HTTP, in-memory), with the profiles and limits that shape a session. Every
// module not exported through package.json `exports` may change at any time.
export { DEFAULT_LIMITS, type Limits, resolveLimits } from "../access/limits.js";
export { DEFAULT_PROFILE, PROFILES, type Profile, parseProfile } from "../access/profiles.js";
export { createMcpServer, type McpSessionOptions } from "../protocols/mcp/server.js";
export type { TransportKind } from "../protocols/mcp/tool.js";
