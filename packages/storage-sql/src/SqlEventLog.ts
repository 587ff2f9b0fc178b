/**
 * EventLog on @effect/sql: one row per (account, event) with a monotonic id.
 */
import { SqlClient } from "@effect/sql"
import { Event, Ids, Ports, Trusted } from "@hosting/core"
import { type DateTime, Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText } from "./internal/sql.js"

interface EventRow {
  readonly id: number | string
  readonly account_id: string
  readonly type: Event.EventType
  readonly data: string
  readonly created_at: string
}

const toEvent = (row: EventRow) =>
  Trusted.make(Event.StoredEvent, {
    id: String(row.id),
    account_id: Ids.AccountId.make(row.account_id),
    type: row.type,
    data: JSON.parse(row.data),
    created_at: timeOf(row.created_at)
  })

/** The numeric cursor of an event id; anything that is not a decimal id reads from the start. */
const cursorOf = (afterId: Option.Option<string>) =>
  Number(Option.getOrElse(Option.filter(afterId, (id) => /^\d{1,15}$/.test(id)), () => "0"))

/** The advisory lock key that serialises event appends on Postgres. */
const eventLogLock = 7_310_001

export const make: Effect.Effect<Ports.EventLog["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // Postgres hands out ids before commit; two writers could commit them out of
  // order and a reader tailing by id would skip the later-committed smaller
  // one. One writer at a time (a lock held to the end of the transaction)
  // makes ids commit in order. SQLite has one writer anyway.
  const oneWriter = sql.onDialectOrElse({
    pg: () => sql`SELECT pg_advisory_xact_lock(${eventLogLock})`.pipe(Effect.asVoid),
    orElse: () => Effect.void
  })

  const append: Ports.EventLog["Type"]["append"] = (events, now) =>
    events.length === 0 ? Effect.succeed([]) : oneWriter.pipe(Effect.zipRight(Effect.forEach(events, (event) =>
      sql<EventRow>`INSERT INTO events (account_id, type, data, created_at)
        VALUES (${event.account_id}, ${event.type}, ${JSON.stringify(event.data)}, ${timeText(now)})
        RETURNING id, account_id, type, data, created_at`.pipe(Effect.map((rows) => toEvent(rows[0]!)))))).pipe(
      storageError("SqlEventLog.append")
    )

  const after: Ports.EventLog["Type"]["after"] = (accountId, afterId, limit) =>
    sql<EventRow>`SELECT id, account_id, type, data, created_at FROM events
      WHERE account_id = ${accountId} AND id > ${cursorOf(afterId)} ORDER BY id LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map(toEvent)),
      storageError("SqlEventLog.after")
    )

  const latest: Ports.EventLog["Type"]["latest"] = (accountId, afterId, limit) =>
    sql<EventRow>`SELECT id, account_id, type, data, created_at FROM events
      WHERE account_id = ${accountId} AND id > ${cursorOf(afterId)} ORDER BY id DESC LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map(toEvent).reverse()),
      storageError("SqlEventLog.latest")
    )

  const horizon = sql<{ pruned: number | string; newest: number | string | null }>`
    SELECT (SELECT pruned FROM event_log_state WHERE id = 1) AS pruned, (SELECT MAX(id) FROM events) AS newest`.pipe(
    Effect.map(([row]) => {
      const pruned = BigInt(row?.pruned ?? 0)
      const newest = BigInt(row?.newest ?? 0)
      return { pruned, newest: newest > pruned ? newest : pruned }
    }),
    storageError("SqlEventLog.horizon")
  )

  const prune = Effect.fnUntraced(
    function*(before: DateTime.Utc) {
      const [row] = yield* sql<{ last: number | string | null }>`SELECT MAX(id) AS last FROM events WHERE created_at < ${timeText(before)}`
      if (row?.last === null || row?.last === undefined) return 0
      const [count] = yield* sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM events WHERE id <= ${Number(row.last)}`
      yield* sql`DELETE FROM events WHERE id <= ${Number(row.last)}`
      yield* sql`UPDATE event_log_state SET pruned = ${Number(row.last)} WHERE id = 1 AND pruned < ${Number(row.last)}`
      return Number(count?.n ?? 0)
    },
    sql.withTransaction,
    storageError("SqlEventLog.prune")
  )

  return Ports.EventLog.of({ append, after, latest, horizon, prune })
})

export const layer = Layer.effect(Ports.EventLog, make)
