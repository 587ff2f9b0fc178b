/**
 * TraceStore on @effect/sql. A page of the listing is read by who may see
 * it (`pageStatement`), its count and stats by the agent's indexes of time;
 * a trace's spans are one range of the key of `trace_spans`.
 */
import { SqlClient, type Statement } from "@effect/sql"
import { Ids, Ports, Trace, TraceStats, Trusted } from "@hosting/core"
import { Array as Arr, type DateTime, Effect, Layer, Option } from "effect"
import { chunksOfKeys, pageOverKeys, storageError, timeOf, timeText, trusted } from "./internal/sql.js"

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
  readonly model: string | null
  readonly input_tokens: number | string | null
  readonly output_tokens: number | string | null
}

/** The columns of a trace row as `toRecord` reads them. */
const traceColumns =
  "publisher_id, agent_name, account_id, owner_id, trace_id, name, status, latency_ms, input, output, started_at, model, input_tokens, output_tokens"

const toRecord = (row: TraceRow) =>
  Trusted.make(Trace.TraceRecord, {
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
    timestamp: timeOf(row.started_at),
    model: row.model,
    usage: row.input_tokens === null || row.output_tokens === null
      ? null
      : { input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens) }
  })

interface SpanRow {
  readonly publisher_id: string
  readonly agent_name: string
  readonly trace_id: string
  readonly span_id: string
  readonly parent_span_id: string | null
  readonly name: string
  readonly kind: Trace.SpanKind
  readonly status: Trace.SpanStatus
  readonly status_message: string
  readonly started_at: string
  readonly ended_at: string
  readonly duration_ms: number | string
  readonly attributes: string
  readonly events: string
}

const toSpan = (row: SpanRow) =>
  Trusted.make(Trace.SpanRecord, {
    publisher_id: Ids.AccountId.make(row.publisher_id),
    agent_name: Ids.AgentName.make(row.agent_name),
    trace_id: row.trace_id,
    span_id: row.span_id,
    parent_span_id: row.parent_span_id,
    name: row.name,
    kind: row.kind,
    status: row.status,
    status_message: row.status_message,
    start_time: timeOf(row.started_at),
    end_time: timeOf(row.ended_at),
    duration_ms: Number(row.duration_ms),
    attributes: JSON.parse(row.attributes),
    events: (JSON.parse(row.events) as ReadonlyArray<{ name: string; timestamp: string; attributes: Record<string, string> }>).map((e) =>
      Trusted.make(Trace.SpanEvent, { name: e.name, timestamp: timeOf(e.timestamp), attributes: e.attributes })
    )
  })

const spanRow = (span: Trace.SpanRecord) => ({
  publisher_id: span.publisher_id,
  agent_name: span.agent_name,
  trace_id: span.trace_id,
  span_id: span.span_id,
  parent_span_id: span.parent_span_id,
  name: span.name,
  kind: span.kind,
  status: span.status,
  status_message: span.status_message,
  started_at: timeText(span.start_time),
  ended_at: timeText(span.end_time),
  duration_ms: span.duration_ms,
  attributes: JSON.stringify(span.attributes),
  events: JSON.stringify(span.events.map((e) => ({ name: e.name, timestamp: timeText(e.timestamp), attributes: e.attributes })))
})

/** Which trace: its agent and id. */
interface TraceKey {
  readonly publisher_id: string
  readonly agent_name: string
  readonly trace_id: string
}

/** Spans per statement: 14 parameters each, within the bound parameters of SQLite and Postgres. */
const spansPerStatement = 1000

/** Traces per statement: within the bound parameters a statement takes (SQLite 32,766, Postgres 65,535). */
const rowsPerStatement = 500

/** The last trace of each id: one statement may not write a row twice (Postgres refuses). */
const lastOfEach = (records: ReadonlyArray<Trace.TraceRecord>) =>
  records.length < 2
    ? records
    : [...new Map(records.map((t) => [`${t.publisher_id}\u0000${t.agent_name}\u0000${t.trace_id}`, t])).values()]

/** The filters a query sets (time window, status, model), as terms of a WHERE condition. */
const filtersOf = (sql: SqlClient.SqlClient, q: Trace.TraceQuery) => [
  ...Option.toArray(Option.map(q.start, (start) => sql`started_at >= ${timeText(start)}`)),
  ...Option.toArray(Option.map(q.end, (end) => sql`started_at <= ${timeText(end)}`)),
  ...Option.toArray(Option.map(q.status, (status) => sql`status = ${status}`)),
  ...Option.toArray(Option.map(q.model, (model) => sql`model = ${model}`))
]

/**
 * The traces a reader sees, as the WHERE condition of each key: of each of
 * its accounts, those without an owner and those of its own chats, each
 * with `filters`. A key is a range of the index of traces without an owner
 * or of that of owned ones (migration 0024), read in time order.
 */
const visibleKeysOf = (sql: SqlClient.SqlClient, q: Trace.TraceQuery, filters: ReadonlyArray<Statement.Fragment>) =>
  [...new Set(q.account_ids)].flatMap((accountId) =>
    [sql`owner_id IS NULL`, sql`owner_id = ${q.viewer}`].map((owner) =>
      sql.and([sql`publisher_id = ${q.publisher_id}`, sql`agent_name = ${q.agent_name}`, sql`account_id = ${accountId}`, owner, ...filters])
    )
  )

/** What a reader may see, as one WHERE condition: the agent's traces of the reader's accounts, without an owner or its own. */
const visibleOf = (sql: SqlClient.SqlClient, q: Pick<Trace.TraceLookup, "publisher_id" | "agent_name" | "account_ids" | "viewer">) =>
  sql.and([
    sql`publisher_id = ${q.publisher_id}`,
    sql`agent_name = ${q.agent_name}`,
    sql.in("account_id", q.account_ids),
    sql.or([sql`owner_id IS NULL`, sql`owner_id = ${q.viewer}`])
  ])

/** Rows in the listing's order (start, then id, both descending): ISO 8601 times sort as text. */
const listingOrder = (x: TraceRow, y: TraceRow) =>
  x.started_at !== y.started_at ? (x.started_at < y.started_at ? 1 : -1) : x.trace_id < y.trace_id ? 1 : x.trace_id > y.trace_id ? -1 : 0

/** Newest first, then by id: the listing's order. */
const newestFirst = "ORDER BY started_at DESC, trace_id DESC"

/**
 * One page of traces, newest first (exported so that tests can check its
 * plan), for at most `keysPerStatement` accounts. A reader sees, of each of
 * its accounts, the traces without an owner and those of its own chats:
 * each of these keys' first traces are read newest first from the index of
 * traces without an owner or from that of owned ones (migration 0024), and
 * the page is taken from their merge.
 * Asked of every visible trace at once, Postgres read every trace of an
 * agent whose traces are mostly visible and sorted them (15.5 ms for 9,000),
 * and both dialects read and dropped every hidden trace of an agent whose
 * traces are mostly hidden.
 */
export const pageStatement = (sql: SqlClient.SqlClient, q: Trace.TraceQuery) => {
  const filters = [
    ...filtersOf(sql, q),
    // The traces after the cursor's in the listing's order: a range of the index.
    ...Option.toArray(Option.map(q.after, (after) => sql`(started_at, trace_id) < (${timeText(after.timestamp)}, ${after.trace_id})`))
  ]
  const keys = visibleKeysOf(sql, q, filters).map((where) =>
    sql`SELECT * FROM (SELECT ${sql.literal(traceColumns)} FROM traces WHERE ${where} ${sql.literal(newestFirst)} LIMIT ${
      q.limit + q.offset
    }) AS k`
  )
  return sql<TraceRow>`${sql.join(" UNION ALL ", false)(keys)} ${sql.literal(newestFirst)} LIMIT ${q.limit} OFFSET ${q.offset}`
}

/**
 * How many traces match the filters, for at most `keysPerStatement`
 * accounts: the sum of each key's count, each a range of one index of
 * migration 0024. Asked of every visible trace at once, SQLite counted
 * through the agent's index and read every trace of the agent
 * (docs/performance.md, "A traces count key by key, and a namespace's live
 * deployments").
 */
export const countStatement = (sql: SqlClient.SqlClient, q: Trace.TraceQuery) => {
  const keys = visibleKeysOf(sql, q, filtersOf(sql, q)).map((where) => sql`SELECT COUNT(*) AS n FROM traces WHERE ${where}`)
  return sql<{ readonly total: number | string | null }>`SELECT SUM(n) AS total FROM (${sql.join(" UNION ALL ", false)(keys)}) AS k`
}

/**
 * The figures of each bucket in one statement, in both dialects: the
 * buckets' bounds as a VALUES list (times are ISO 8601 text, which sorts as
 * time), each visible trace numbered by latency within its bucket, and the
 * nearest-rank percentiles read at ranks ceil(n/2) and ceil(95n/100) in
 * integer arithmetic. Buckets without traces have no row.
 */
export const statsStatement = (sql: SqlClient.SqlClient, q: TraceStats.StatsQuery) => {
  const buckets = sql.csv(q.bounds.map((b, i) => sql`(${sql.literal(String(i))}, ${timeText(b.start)}, ${timeText(b.end)})`))
  const visible = visibleOf(sql, q)
  return sql<{ i: number | string; n: number | string; errors: number | string; p50: number | string; p95: number | string }>`
    WITH b (i, lo, hi) AS (VALUES ${buckets}),
    r AS (
      SELECT b.i AS i, t.latency_ms AS latency, t.status AS status,
        ROW_NUMBER() OVER (PARTITION BY b.i ORDER BY t.latency_ms) AS rn,
        COUNT(*) OVER (PARTITION BY b.i) AS n
      FROM b JOIN traces t ON t.started_at >= b.lo AND t.started_at < b.hi
      WHERE ${visible}
    )
    SELECT i, MAX(n) AS n, SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END) AS errors,
      MIN(CASE WHEN rn >= (50 * n + 99) / 100 THEN latency END) AS p50,
      MIN(CASE WHEN rn >= (95 * n + 99) / 100 THEN latency END) AS p95
    FROM r GROUP BY i ORDER BY i`
}

/**
 * The traces of spans whose root never came (or whose trace is gone), older
 * than `cutoff`: they age out by their own start (exported for the test of
 * its plan). The spans are walked oldest first through their index of times
 * and the first `max` taken, then made distinct: with the distinct inside,
 * SQLite walked every span of the server in key order to spare itself the
 * sort (230 ms a round at 500,000 spans, each round in a transaction that
 * the one connection of a SQLite server waits for, against 191 µs).
 */
export const orphanSpansStatement = (sql: SqlClient.SqlClient, cutoff: string, max: number) =>
  sql<TraceKey>`SELECT DISTINCT o.publisher_id, o.agent_name, o.trace_id FROM (
      SELECT s.publisher_id, s.agent_name, s.trace_id FROM trace_spans s
      WHERE s.started_at < ${cutoff} AND NOT EXISTS (SELECT 1 FROM traces t
        WHERE t.publisher_id = s.publisher_id AND t.agent_name = s.agent_name AND t.trace_id = s.trace_id)
      ORDER BY s.started_at LIMIT ${max}
    ) o`

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
        started_at = excluded.started_at
      WHERE traces.account_id = excluded.account_id AND COALESCE(traces.owner_id, '') = COALESCE(excluded.owner_id, '')`

  /** The traces of `keys`, grouped by agent, in groups of at most `rowsPerStatement` ids. */
  const byAgent = (keys: ReadonlyArray<TraceKey>) => {
    const groups = new Map<string, { publisher_id: string; agent_name: string; ids: Set<string> }>()
    for (const key of keys) {
      const agent = `${key.publisher_id}\u0000${key.agent_name}`
      let group = groups.get(agent)
      if (group === undefined) groups.set(agent, group = { publisher_id: key.publisher_id, agent_name: key.agent_name, ids: new Set() })
      group.ids.add(key.trace_id)
    }
    return [...groups.values()].flatMap((g) => Arr.chunksOf([...g.ids], rowsPerStatement).map((ids) => ({ ...g, ids })))
  }

  /**
   * Keeps on each trace row of `keys` the model and usage of its stored spans
   * (`Trace.summaryOf`): one read per agent, an update per trace that has spans.
   */
  const refresh = (keys: ReadonlyArray<TraceKey>) => Effect.forEach(byAgent(keys), refreshGroup, { discard: true })

  /** `refresh` for one agent's traces; one generator function for every group (docs/decisions.md, "Generator functions made once"). */
  const refreshGroup = Effect.fnUntraced(function*(group: ReturnType<typeof byAgent>[number]) {
    const rows = yield* sql<SpanRow>`SELECT * FROM trace_spans
      WHERE publisher_id = ${group.publisher_id} AND agent_name = ${group.agent_name} AND ${sql.in("trace_id", group.ids)}`
    const spans = new Map<string, Array<Trace.SpanRecord>>()
    for (const row of rows) {
      const held = spans.get(row.trace_id)
      if (held === undefined) spans.set(row.trace_id, [toSpan(row)])
      else held.push(toSpan(row))
    }
    for (const [traceId, held] of spans) {
      const { model, usage } = Trace.summaryOf(held)
      yield* sql`UPDATE traces SET model = ${model}, input_tokens = ${usage?.input_tokens ?? null},
          output_tokens = ${usage?.output_tokens ?? null}
        WHERE publisher_id = ${group.publisher_id} AND agent_name = ${group.agent_name} AND trace_id = ${traceId}`
    }
  })

  // The rows and their summaries land together.
  const append = (records: ReadonlyArray<Trace.TraceRecord>) => {
    const batches = Arr.chunksOf(lastOfEach(records), rowsPerStatement)
    if (batches.length === 0) return Effect.void
    return Effect.forEach(batches, insert, { discard: true }).pipe(
      Effect.zipRight(refresh(records)),
      sql.withTransaction,
      storageError("SqlTraceStore.append")
    )
  }

  /** A batch of spans in one statement; a stored span with the id of one of them is replaced. */
  const insertSpans = (batch: ReadonlyArray<Trace.SpanRecord>) =>
    sql`INSERT INTO trace_spans ${sql.insert(batch.map(spanRow))}
      ON CONFLICT (publisher_id, agent_name, trace_id, span_id) DO UPDATE SET parent_span_id = excluded.parent_span_id,
        name = excluded.name, kind = excluded.kind, status = excluded.status, status_message = excluded.status_message,
        started_at = excluded.started_at, ended_at = excluded.ended_at, duration_ms = excluded.duration_ms,
        attributes = excluded.attributes, events = excluded.events`

  /** The span ids stored for the traces of `spans`, by `Trace.spanTraceKey`. */
  const storedIds = (spans: ReadonlyArray<Trace.SpanRecord>) => {
    const traces = [...new Map(spans.map((span) => [Trace.spanTraceKey(span), span])).values()]
    return Effect.map(
      Effect.forEach(traces, (t) =>
        sql<{ readonly span_id: string }>`SELECT span_id FROM trace_spans
          WHERE publisher_id = ${t.publisher_id} AND agent_name = ${t.agent_name} AND trace_id = ${t.trace_id}`.pipe(
          Effect.map((rows) => [Trace.spanTraceKey(t), new Set(rows.map((r) => r.span_id))] as const)
        )),
      (entries) => new Map(entries)
    )
  }

  // The bound is read and kept in one transaction, so that exports of one trace at once keep it too.
  const storeSpans = Effect.fnUntraced(
    function*(spans: ReadonlyArray<Trace.SpanRecord>) {
      const last = [...new Map(spans.map((span) => [`${Trace.spanTraceKey(span)}\u0000${span.span_id}`, span])).values()]
      const kept = Trace.withinSpanBound(yield* storedIds(last), last)
      for (const batch of Arr.chunksOf(kept, spansPerStatement)) yield* insertSpans(batch)
      yield* refresh(kept)
    },
    sql.withTransaction,
    storageError("SqlTraceStore.appendSpans")
  )
  const appendSpans = (spans: ReadonlyArray<Trace.SpanRecord>) => spans.length === 0 ? Effect.void : storeSpans(spans)

  const findVisible = Effect.fnUntraced(
    function*(lookup: Trace.TraceLookup) {
      const [row] = yield* sql<TraceRow>`SELECT ${sql.literal(traceColumns)}
        FROM traces WHERE ${visibleOf(sql, lookup)} AND trace_id = ${lookup.trace_id}`
      if (row === undefined) return Option.none()
      const spans = yield* sql<SpanRow>`SELECT * FROM trace_spans
        WHERE publisher_id = ${lookup.publisher_id} AND agent_name = ${lookup.agent_name} AND trace_id = ${lookup.trace_id}`
      return Option.some({ trace: toRecord(row), spans: spans.map(toSpan) })
    },
    storageError("SqlTraceStore.find")
  )
  const find = (lookup: Trace.TraceLookup) => lookup.account_ids.length === 0 ? Effect.succeed(Option.none()) : findVisible(lookup)

  /** A page of the listing: of more accounts than a statement reads, each chunk's first traces merged. */
  const page = (q: Trace.TraceQuery) =>
    pageOverKeys(
      q.account_ids,
      { skip: q.offset, take: q.limit },
      listingOrder,
      (account_ids, offset, limit) => pageStatement(sql, { ...q, account_ids, limit, offset })
    )

  /** The listing's total: of more accounts than a statement reads, each chunk's count summed. */
  const count = (q: Trace.TraceQuery) =>
    Effect.map(
      Effect.forEach(chunksOfKeys(q.account_ids), (account_ids) => countStatement(sql, { ...q, account_ids })),
      (counts) => counts.reduce((total, [row]) => total + Number(row?.total ?? 0), 0)
    )

  const query = (q: Trace.TraceQuery) =>
    q.account_ids.length === 0
      ? Effect.succeed({ traces: [], total: 0 })
      : Effect.all({ rows: page(q), total: count(q) }).pipe(
        Effect.map(({ rows, total }) => ({ traces: rows.map(toRecord), total })),
        storageError("SqlTraceStore.query")
      )

  /** Deletes the traces of `keys` and their spans. */
  const remove = (keys: ReadonlyArray<TraceKey>) =>
    Effect.forEach(byAgent(keys), (group) =>
      Effect.zipRight(
        sql`DELETE FROM trace_spans WHERE publisher_id = ${group.publisher_id} AND agent_name = ${group.agent_name}
          AND ${sql.in("trace_id", group.ids)}`,
        sql`DELETE FROM traces WHERE publisher_id = ${group.publisher_id} AND agent_name = ${group.agent_name}
          AND ${sql.in("trace_id", group.ids)}`
      ), { discard: true })

  const sweep = Effect.fnUntraced(
    function*(before: DateTime.Utc, max: number) {
      const cutoff = timeText(before)
      const old = yield* sql<TraceKey>`SELECT publisher_id, agent_name, trace_id FROM traces
        WHERE started_at < ${cutoff} ORDER BY started_at LIMIT ${max}`
      const orphans = yield* orphanSpansStatement(sql, cutoff, max)
      yield* remove([...old, ...orphans])
      return old.length + orphans.length
    },
    sql.withTransaction,
    storageError("SqlTraceStore.sweep")
  )

  const stats = (q: TraceStats.StatsQuery) =>
    q.account_ids.length === 0 || q.bounds.length === 0
      ? Effect.succeed(q.bounds.map(() => TraceStats.figuresOf([])))
      : statsStatement(sql, q).pipe(
        Effect.map((rows) => {
          const byBucket = new Map(rows.map((row) => [Number(row.i), row]))
          return q.bounds.map((_, i): TraceStats.Figures => {
            const row = byBucket.get(i)
            return row === undefined
              ? TraceStats.figuresOf([])
              : { count: Number(row.n), errors: Number(row.errors), p50_ms: Number(row.p50), p95_ms: Number(row.p95) }
          })
        }),
        storageError("SqlTraceStore.stats")
      )

  return Ports.TraceStore.of({ append, appendSpans, find, query, sweep, stats })
})

export const layer = Layer.effect(Ports.TraceStore, make)
