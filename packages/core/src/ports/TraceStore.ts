import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { SpanRecord, TraceLookup, TraceQuery, TraceRecord } from "../model/Trace.js"

/** Observability traces. */
export class TraceStore extends Context.Tag("@hosting/core/TraceStore")<TraceStore, {
  /** Stores traces; a trace with the id of a stored trace of the same agent replaces it. */
  readonly append: (traces: ReadonlyArray<TraceRecord>) => Effect.Effect<void, StorageError>
  /**
   * Stores the spans of traces; a span with the id of a stored span of the
   * same trace replaces it. A trace keeps at most `Trace.maxSpansPerTrace`
   * spans (`Trace.withinSpanBound`): new spans past it are not stored.
   * Spans may come before their trace's root (they wait for it).
   */
  readonly appendSpans: (spans: ReadonlyArray<SpanRecord>) => Effect.Effect<void, StorageError>
  /** A trace the viewer may see (the visibility of `query`) with its stored spans, in no order. */
  readonly find: (lookup: TraceLookup) => Effect.Effect<Option.Option<{
    readonly trace: TraceRecord
    readonly spans: ReadonlyArray<SpanRecord>
  }>, StorageError>
  /** One page of an agent's traces, newest first, and how many match the filters in all. */
  readonly query: (query: TraceQuery) => Effect.Effect<{
    readonly traces: ReadonlyArray<TraceRecord>
    readonly total: number
  }, StorageError>
}>() {}
