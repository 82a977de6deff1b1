// Public surface `afs/broker`: afs as the MCP client side of client-brokered files (roots/list,
// files/consent, files/*) for MCP hosts on the official SDK: BrokerHost, attachBroker, root specs,
// consent policies and the audit log. Every module not exported through package.json `exports`
// may change at any time.
export { type AuditEntry, AuditLog, type AuditOptions, type AuditOutcome } from "../access/audit.js";
export {
  type ApprovedPath,
  type AskConsent,
  allowConsent,
  askConsent,
  type ConsentDecision,
  type ConsentMode,
  type ConsentProvider,
  type ConsentRequest,
  denyConsent,
  policyFileConsent,
} from "../access/consent.js";
export type { RateLimit } from "../access/rate-limit.js";
export { attachBroker } from "../protocols/broker/attach.js";
export { BrokerHost, type BrokerHostOptions, parseRootSpec, type RootSpec } from "../protocols/broker/host.js";
export { BROKER_CAPABILITIES, BROKER_ERRORS, type BrokerErrorName } from "../protocols/broker/wire.js";
