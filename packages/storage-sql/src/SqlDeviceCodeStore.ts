/**
 * DeviceCodeStore on @effect/sql: device codes by hash, never in clear.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Ports } from "@hosting/core"
import { type DateTime, Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText } from "./internal/sql.js"

interface DeviceCodeRow {
  readonly device_hash: string
  readonly user_code: string
  readonly client_id: string
  readonly scope: string
  readonly status: Ports.DeviceCodeRecord["status"]
  readonly user_id: string | null
  readonly decided_by: string | null
  readonly poll_interval: number | string
  readonly last_polled_at: string | null
  readonly expires_at: string
  readonly created_at: string
}

const toRecord = (row: DeviceCodeRow): Ports.DeviceCodeRecord => ({
  device_hash: row.device_hash,
  user_code: row.user_code,
  client_id: row.client_id,
  scope: row.scope,
  status: row.status,
  user_id: Option.map(Option.fromNullable(row.user_id), Ids.UserId.make),
  decided_by: Option.fromNullable(row.decided_by),
  interval: Number(row.poll_interval),
  last_polled_at: Option.map(Option.fromNullable(row.last_polled_at), timeOf),
  expires_at: timeOf(row.expires_at),
  created_at: timeOf(row.created_at)
})

export const make: Effect.Effect<Ports.DeviceCodeStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal(
    "device_hash, user_code, client_id, scope, status, user_id, decided_by, poll_interval, last_polled_at, expires_at, created_at"
  )

  const insert = (r: Ports.DeviceCodeRecord) =>
    sql`INSERT INTO device_codes (${columns}) VALUES (${r.device_hash}, ${r.user_code}, ${r.client_id}, ${r.scope}, ${r.status},
      ${Option.getOrNull(r.user_id)}, ${Option.getOrNull(r.decided_by)}, ${r.interval}, ${Option.getOrNull(Option.map(r.last_polled_at, timeText))},
      ${timeText(r.expires_at)}, ${timeText(r.created_at)})`.pipe(Effect.asVoid, storageError("SqlDeviceCodeStore.insert"))

  const findBy = (operation: string, column: "user_code" | "device_hash") => (value: string) =>
    sql<DeviceCodeRow>`SELECT ${columns} FROM device_codes WHERE ${sql(column)} = ${value}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
      storageError(operation)
    )

  const decide = (userCode: string, status: "approved" | "denied", userId: Ids.UserId, decidedBy: string) =>
    sql<{ device_hash: string }>`UPDATE device_codes SET status = ${status}, user_id = ${userId}, decided_by = ${decidedBy}
      WHERE user_code = ${userCode} AND status = 'pending' RETURNING device_hash`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlDeviceCodeStore.decide")
    )

  const recordPoll = (hash: string, at: DateTime.Utc, interval: number) =>
    sql`UPDATE device_codes SET last_polled_at = ${timeText(at)}, poll_interval = ${interval} WHERE device_hash = ${hash}`.pipe(
      Effect.asVoid,
      storageError("SqlDeviceCodeStore.recordPoll")
    )

  const remove = (hash: string) =>
    sql<{ device_hash: string }>`DELETE FROM device_codes WHERE device_hash = ${hash} RETURNING device_hash`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlDeviceCodeStore.remove")
    )

  const pruneExpired = (before: DateTime.Utc) =>
    sql<{ device_hash: string }>`DELETE FROM device_codes WHERE expires_at < ${timeText(before)} RETURNING device_hash`.pipe(
      Effect.map((rows) => rows.length),
      storageError("SqlDeviceCodeStore.pruneExpired")
    )

  return Ports.DeviceCodeStore.of({
    insert,
    findByUserCode: findBy("SqlDeviceCodeStore.findByUserCode", "user_code"),
    findByDeviceHash: findBy("SqlDeviceCodeStore.findByDeviceHash", "device_hash"),
    decide,
    recordPoll,
    remove,
    pruneExpired
  })
})

export const layer = Layer.effect(Ports.DeviceCodeStore, make)
