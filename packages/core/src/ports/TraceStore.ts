import type { DateTime, Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { SpanRecord, TraceLookup, TraceQuery, TraceRecord } from "../model/Trace.js"
import type { Figures, StatsQuery } from "../model/TraceStats.js"

/** Observability traces. */
export class TraceStore extends Context.Tag("@hosting/core/TraceStore")<TraceStore, {
  /**
   * Stores traces; a trace with the id of a stored trace of the same agent
   * replaces it when both are for the same account and owner
   * (`Trace.sameAudience`), else it is not stored: an agent that exports a
   * root span in a chat turn's trace does not take the turn's record over.
   * A trace's `model` and `usage` are the store's to keep: the summary of
   * its stored spans (`Trace.summaryOf`), refreshed as its spans or the
   * trace itself arrive; what `traces` carry there is not stored.
   */
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
  /**
   * Deletes at most `max` traces (with their spans) that started before
   * `before`, oldest first, and at most `max` traces' worth of spans that
   * started before it and belong to no stored trace; answers how many traces
   * and orphan traces' spans it deleted (0 when nothing is left to delete).
   */
  readonly sweep: (before: DateTime.Utc, max: number) => Effect.Effect<number, StorageError>
  /**
   * The figures of each bucket of `query.bounds`, in their order: the
   * traces the viewer may see (the visibility of `query`) that started in
   * it, their errors, and the p50 and p95 of their latency by nearest rank
   * (`TraceStats.figuresOf` says exactly what).
   */
  readonly stats: (query: StatsQuery) => Effect.Effect<ReadonlyArray<Figures>, StorageError>
  /**
   * One page of an agent's traces, newest first (ties by id, descending),
   * after `query.after` when set, and how many match the filters in all
   * (the cursor does not narrow `total`).
   */
  readonly query: (query: TraceQuery) => Effect.Effect<{
    readonly traces: ReadonlyArray<TraceRecord>
    readonly total: number
  }, StorageError>
}>() {}
