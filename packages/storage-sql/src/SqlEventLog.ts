/**
 * EventLog on @effect/sql: one row per (account, event) with a monotonic id.
 */
import { SqlClient } from "@effect/sql"
import { Event, Ids, Ports } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText } from "./internal/sql.js"

interface EventRow {
  readonly id: number | string
  readonly account_id: string
  readonly type: Event.EventType
  readonly data: string
  readonly created_at: string
}

const toEvent = (row: EventRow) =>
  new Event.StoredEvent({
    id: String(row.id),
    account_id: Ids.AccountId.make(row.account_id),
    type: row.type,
    data: JSON.parse(row.data),
    created_at: timeOf(row.created_at)
  })

export const make: Effect.Effect<Ports.EventLog["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const append: Ports.EventLog["Type"]["append"] = (events, now) =>
    Effect.forEach(events, (event) =>
      sql<EventRow>`INSERT INTO events (account_id, type, data, created_at)
        VALUES (${event.account_id}, ${event.type}, ${JSON.stringify(event.data)}, ${timeText(now)})
        RETURNING id, account_id, type, data, created_at`.pipe(Effect.map((rows) => toEvent(rows[0]!)))).pipe(
      storageError("SqlEventLog.append")
    )

  const after: Ports.EventLog["Type"]["after"] = (accountId, afterId, limit) => {
    const from = Option.getOrElse(Option.filter(afterId, (id) => /^\d{1,18}$/.test(id)), () => "0")
    return sql<EventRow>`SELECT id, account_id, type, data, created_at FROM events
      WHERE account_id = ${accountId} AND id > ${Number(from)} ORDER BY id LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map(toEvent)),
      storageError("SqlEventLog.after")
    )
  }

  return Ports.EventLog.of({ append, after })
})

export const layer = Layer.effect(Ports.EventLog, make)
