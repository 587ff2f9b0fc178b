import { Context, Effect } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { TraceQuery, TraceRecord } from "../model/Trace.js"

/** Observability traces. */
export class TraceStore extends Context.Tag("@hosting/core/TraceStore")<TraceStore, {
  /** Stores traces; a trace with the id of a stored trace of the same agent replaces it. */
  readonly append: (traces: ReadonlyArray<TraceRecord>) => Effect.Effect<void, StorageError>
  /** One page of an agent's traces, newest first, and how many match the filters in all. */
  readonly query: (query: TraceQuery) => Effect.Effect<{
    readonly traces: ReadonlyArray<TraceRecord>
    readonly total: number
  }, StorageError>
}>() {}
