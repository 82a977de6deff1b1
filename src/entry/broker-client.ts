// Public surface `afs/broker-client`: for MCP server authors on the official SDK, the files of the
// host that brokers them (BrokeredFiles: typed files/* calls, chunked streams, watch as an async
// iterator) and its typed errors. Every module not exported through package.json `exports` may
// change at any time.
export {
  BrokeredFileError,
  BrokeredFiles,
  type BrokeredFilesOptions,
  type ChangeEvent,
  clientSupportsBrokering,
  type Extra,
  type ListResult,
  type ReadResult,
  toBrokeredFileError,
  type WatchEventName,
  type WriteResult,
} from "../protocols/broker/client.js";
export { BROKER_ERRORS, type BrokerErrorName } from "../protocols/broker/wire.js";
