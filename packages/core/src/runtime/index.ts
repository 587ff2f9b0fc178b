/**
 * Machinery the use cases run on that adapters use too: pushing live
 * streams to a receiver, spans that cost nothing while tracing is off, the
 * metrics the services keep, combinators that cost the run loop fewer
 * steps, contexts extended without a copy.
 */
export * as Metrics from "./Metrics.js"
export * as Receiver from "./Receiver.js"
export * as Tracing from "./Tracing.js"
export * as Steps from "./Steps.js"
export * as Contexts from "./Contexts.js"
export * as InFlight from "./InFlight.js"
export * as Recent from "./Recent.js"
