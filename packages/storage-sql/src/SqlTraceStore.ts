/**
 * TraceStore on @effect/sql. The listing is served by the index on
 * (publisher_id, agent_name, started_at).
 */
import { SqlClient } from "@effect/sql"
import { Ids, Ports, Trace } from "@hosting/core"
import { Array as Arr, Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText, trusted } from "./internal/sql.js"

interface TraceRow {
  readonly publisher_id: string
  readonly agent_name: string
  readonly account_id: string
  readonly owner_id: string | null
  readonly trace_id: string
  readonly name: string
  readonly status: Trace.TraceStatus
  readonly latency_ms: number | string
  readonly input: string
  readonly output: string
  readonly started_at: string
}

const toRecord = (row: TraceRow) =>
  new Trace.TraceRecord({
    publisher_id: Ids.AccountId.make(row.publisher_id),
    agent_name: Ids.AgentName.make(row.agent_name),
    account_id: Ids.AccountId.make(row.account_id),
    owner_id: Option.map(Option.fromNullable(row.owner_id), (id) => Ids.UserId.make(id, trusted)),
    trace_id: row.trace_id,
    name: row.name,
    status: row.status,
    latency_ms: Number(row.latency_ms),
    input: row.input,
    output: row.output,
    timestamp: timeOf(row.started_at)
  }, trusted)

/** Traces per statement: within the bound parameters a statement takes (SQLite 32,766, Postgres 65,535). */
const rowsPerStatement = 500

/** The last trace of each id: one statement may not write a row twice (Postgres refuses). */
const lastOfEach = (records: ReadonlyArray<Trace.TraceRecord>) =>
  records.length < 2
    ? records
    : [...new Map(records.map((t) => [`${t.publisher_id}\u0000${t.agent_name}\u0000${t.trace_id}`, t])).values()]

/** The filters of a query as one WHERE condition. */
const whereOf = (sql: SqlClient.SqlClient, q: Trace.TraceQuery) =>
  sql.and([
    sql`publisher_id = ${q.publisher_id}`,
    sql`agent_name = ${q.agent_name}`,
    sql.in("account_id", q.account_ids),
    sql.or([sql`owner_id IS NULL`, sql`owner_id = ${q.viewer}`]),
    ...Option.toArray(Option.map(q.start, (start) => sql`started_at >= ${timeText(start)}`)),
    ...Option.toArray(Option.map(q.end, (end) => sql`started_at <= ${timeText(end)}`)),
    ...Option.toArray(Option.map(q.status, (status) => sql`status = ${status}`))
  ])

/** One page of traces, newest first (exported so that tests can check the plan uses the index). */
export const pageStatement = (sql: SqlClient.SqlClient, q: Trace.TraceQuery) =>
  sql<TraceRow>`SELECT publisher_id, agent_name, account_id, owner_id, trace_id, name, status, latency_ms, input, output, started_at
    FROM traces WHERE ${whereOf(sql, q)} ORDER BY started_at DESC, trace_id DESC LIMIT ${q.limit} OFFSET ${q.offset}`

/** How many traces match the filters. */
export const countStatement = (sql: SqlClient.SqlClient, q: Trace.TraceQuery) =>
  sql<{ readonly total: number | string }>`SELECT COUNT(*) AS total FROM traces WHERE ${whereOf(sql, q)}`

export const make: Effect.Effect<Ports.TraceStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** Stores a batch of traces in one statement; a stored trace with the id of one of them is replaced. */
  const insert = (batch: ReadonlyArray<Trace.TraceRecord>) =>
    sql`INSERT INTO traces ${
      sql.insert(batch.map((t) => ({
        publisher_id: t.publisher_id,
        agent_name: t.agent_name,
        trace_id: t.trace_id,
        account_id: t.account_id,
        owner_id: Option.getOrNull(t.owner_id),
        name: t.name,
        status: t.status,
        latency_ms: t.latency_ms,
        input: t.input,
        output: t.output,
        started_at: timeText(t.timestamp)
      })))
    }
      ON CONFLICT (publisher_id, agent_name, trace_id) DO UPDATE SET account_id = excluded.account_id, owner_id = excluded.owner_id, name = excluded.name,
        status = excluded.status, latency_ms = excluded.latency_ms, input = excluded.input, output = excluded.output,
        started_at = excluded.started_at`

  // One statement is atomic by itself: only traces that take several need a transaction around them.
  const append = (records: ReadonlyArray<Trace.TraceRecord>) => {
    const batches = Arr.chunksOf(lastOfEach(records), rowsPerStatement)
    if (batches.length === 0) return Effect.void
    const writes = batches.length === 1 ? insert(batches[0]!) : Effect.forEach(batches, insert, { discard: true }).pipe(sql.withTransaction)
    return writes.pipe(Effect.asVoid, storageError("SqlTraceStore.append"))
  }

  const query = (q: Trace.TraceQuery) =>
    q.account_ids.length === 0
      ? Effect.succeed({ traces: [], total: 0 })
      : Effect.all({ rows: pageStatement(sql, q), count: countStatement(sql, q) }).pipe(
        Effect.map(({ count, rows }) => ({ traces: rows.map(toRecord), total: Number(count[0]?.total ?? 0) })),
        storageError("SqlTraceStore.query")
      )

  return Ports.TraceStore.of({ append, query })
})

export const layer = Layer.effect(Ports.TraceStore, make)
