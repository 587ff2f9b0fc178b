/**
 * Latency percentiles and error rate of an agent's traces over time: a
 * window cut into buckets of equal length, each with the count of traces
 * that started in it, how many failed, and the p50 and p95 of their latency
 * (nearest rank). Stores compute them (SQL on both dialects, the memory store
 * with `bucketStats`), so that the same traces give the same answers.
 */
import { DateTime, Schema } from "effect"
import type { AccountId, AgentName, UserId } from "./Ids.js"

/** The most buckets one window may have, and how many when the caller names none. */
export const maxBuckets = 200
export const defaultBuckets = 24

/** One bucket of a window: traces that started in `[start, end)`. */
export const Bucket = Schema.Struct({
  start: Schema.DateTimeUtc,
  end: Schema.DateTimeUtc,
  count: Schema.NonNegativeInt,
  errors: Schema.NonNegativeInt,
  /** `errors / count`; null when no trace started in the bucket. */
  error_rate: Schema.NullOr(Schema.Number),
  p50_ms: Schema.NullOr(Schema.Number),
  p95_ms: Schema.NullOr(Schema.Number)
}).annotations({ identifier: "TraceStatsBucket" })
export type Bucket = typeof Bucket.Type

/** The stats of a window (`GET .../observability/traces/stats`). */
export const TraceStats = Schema.Struct({
  start_time: Schema.DateTimeUtc,
  end_time: Schema.DateTimeUtc,
  bucket_ms: Schema.Number,
  buckets: Schema.Array(Bucket)
}).annotations({ identifier: "TraceStats" })
export type TraceStats = typeof TraceStats.Type

/** A bucket's bounds, `end` excluded. */
export interface Bounds {
  readonly start: DateTime.Utc
  readonly end: DateTime.Utc
}

/**
 * The buckets of the window `[start, end]` (both ends included, as in the
 * listing): `count` buckets of a whole number of milliseconds each, the
 * last one ending just after `end`.
 */
export const boundsOf = (start: DateTime.Utc, end: DateTime.Utc, count: number): { readonly width: number; readonly bounds: ReadonlyArray<Bounds> } => {
  const from = start.epochMillis
  const until = end.epochMillis + 1
  const width = Math.max(1, Math.ceil((until - from) / count))
  const bounds = Array.from({ length: count }, (_, i) => ({
    start: DateTime.unsafeMake(Math.min(from + i * width, until)),
    end: DateTime.unsafeMake(i === count - 1 ? until : Math.min(from + (i + 1) * width, until))
  }))
  return { width, bounds }
}

/** What a store is asked: the visibility of a listing and the buckets' bounds. */
export interface StatsQuery {
  readonly publisher_id: AccountId
  readonly agent_name: AgentName
  readonly account_ids: ReadonlyArray<AccountId>
  readonly viewer: UserId
  readonly bounds: ReadonlyArray<Bounds>
}

/** A bucket's figures, as a store computes them. */
export interface Figures {
  readonly count: number
  readonly errors: number
  readonly p50_ms: number | null
  readonly p95_ms: number | null
}

/** The rank (1-based) of the nearest-rank `p`-th percentile (p in hundredths) of `n` sorted values: ceil(p·n/100). */
export const rankOf = (p: number, n: number): number => Math.floor((p * n + 99) / 100)

/** The figures of one bucket's traces (the memory store's computation; SQL computes the same). */
export const figuresOf = (traces: ReadonlyArray<{ readonly latency_ms: number; readonly status: string }>): Figures => {
  const latencies = traces.map((t) => t.latency_ms).sort((a, b) => a - b)
  const n = latencies.length
  return {
    count: n,
    errors: traces.filter((t) => t.status === "error").length,
    p50_ms: n === 0 ? null : latencies[rankOf(50, n) - 1]!,
    p95_ms: n === 0 ? null : latencies[rankOf(95, n) - 1]!
  }
}

/** A bucket as the API shows it. */
export const bucketOf = (bounds: Bounds, figures: Figures): Bucket => ({
  start: bounds.start,
  end: bounds.end,
  count: figures.count,
  errors: figures.errors,
  error_rate: figures.count === 0 ? null : figures.errors / figures.count,
  p50_ms: figures.p50_ms,
  p95_ms: figures.p95_ms
})
