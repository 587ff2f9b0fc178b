/**
 * Machinery the use cases run on that adapters use too: pushing live
 * streams to a receiver, spans that cost nothing while tracing is off.
 */
export * as Receiver from "./Receiver.js"
export * as Tracing from "./Tracing.js"
