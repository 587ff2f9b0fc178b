/**
 * What the services measure about themselves, as Effect metrics in the
 * process's registry (`Metric.unsafeSnapshot` reads them; the example
 * server renders them at `/metrics` through `@hosting/http-node`).
 *
 * Every update here is plain code that costs a few hundred nanoseconds: a
 * gauge set, a histogram observed with labels fixed once. They are made
 * from callbacks that run without a fiber (a chunk arriving on a socket),
 * so none of them is an effect. Two servers in one process share them.
 */
import { Metric, MetricBoundaries, MetricLabel } from "effect"

/** The labels of an update with none of its own: one array, so that the registry finds its series once. */
const none: ReadonlyArray<MetricLabel.MetricLabel> = []

/** Adds `delta` to a gauge (several services of one process may count into one). */
export const add = (gauge: Metric.Metric.Gauge<number>, delta: number) => {
  if (delta !== 0) gauge.unsafeModify(delta, none)
}

/** Records one value of a histogram. */
export const observe = (histogram: Metric.Metric.Histogram<number>, value: number) => histogram.unsafeUpdate(value, none)

/** Seconds, from a tenth of a millisecond to ten seconds: lags and storage calls are mostly well below a millisecond. */
const seconds = MetricBoundaries.fromIterable([0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])

/** Open event streams (`GET /accounts/{account}/events`) of this process. */
export const eventStreamsOpen = Metric.gauge("hosting_event_streams_open", {
  description: "Account event streams open on this process."
})

/** Open reply streams of this process. */
export const replyStreamsOpen = Metric.gauge("hosting_reply_streams_open", {
  description: "Conversation reply streams open on this process."
})

/** Replies this process is receiving from agents now. */
export const repliesInFlight = Metric.gauge("hosting_replies_in_flight", {
  description: "Assistant replies this process is receiving from their agents."
})

/** From a reply chunk's arrival from the agent to its delivery to a reply stream (on any process). */
export const replyChunkLag = Metric.histogram(
  "hosting_reply_chunk_lag_seconds",
  seconds,
  "Time from a reply chunk's arrival from its agent to its delivery to a reply stream, through the reply bus."
)

/** From an event's commit to its delivery to the event streams that wait for it. */
export const eventDeliveryLag = Metric.histogram(
  "hosting_event_delivery_lag_seconds",
  seconds,
  "Time from an event's commit to its delivery to the account's live event streams (through the event bus and a read of the log)."
)

/** How many writes shared one transaction of a group commit. */
export const groupCommitBatch = Metric.histogram(
  "hosting_group_commit_batch_size",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 10 }),
  "Writes committed together in one transaction by a group commit (reply stores)."
)

const storageOperation = Metric.histogram(
  "hosting_storage_operation_duration_seconds",
  seconds,
  "Time of one storage operation (a repository method: its queries and their decoding), by operation."
)

/** The label of each storage operation seen, made once: the registry finds a series by its labels' identity. */
const operationLabels = new Map<string, ReadonlyArray<MetricLabel.MetricLabel>>()

/** Records the time one storage operation took. */
export const observeStorage = (operation: string, seconds: number) => {
  let labels = operationLabels.get(operation)
  if (labels === undefined) {
    labels = [MetricLabel.make("operation", operation)]
    operationLabels.set(operation, labels)
  }
  storageOperation.unsafeUpdate(seconds, labels)
}

const databasePool = Metric.gauge("hosting_database_pool_connections", {
  description: "Connections of the database pool: open in all, idle, and callers waiting for one (state label)."
})

const poolStates = {
  total: [MetricLabel.make("state", "total")],
  idle: [MetricLabel.make("state", "idle")],
  waiting: [MetricLabel.make("state", "waiting")]
} as const

/** Adds to the pool's gauges (a pool that closes takes back what it added). */
export const addPool = (delta: { readonly total: number; readonly idle: number; readonly waiting: number }) => {
  databasePool.unsafeModify(delta.total, poolStates.total)
  databasePool.unsafeModify(delta.idle, poolStates.idle)
  databasePool.unsafeModify(delta.waiting, poolStates.waiting)
}

/** The number of seconds since `startMs` (a `Date.now()` reading). */
export const secondsSince = (startMs: number) => (Date.now() - startMs) / 1000
