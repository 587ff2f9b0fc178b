/**
 * TokenStore on @effect/sql: token hashes only, never tokens.
 */
import { SqlClient } from "@effect/sql"
import { Ids, Ports } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText } from "./internal/sql.js"

export const make: Effect.Effect<Ports.TokenStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findByHash = (hash: string) =>
    sql<{ hash: string; user_id: string; expires_at: string | null }>`
      SELECT hash, user_id, expires_at FROM tokens WHERE hash = ${hash}`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row) => ({
          hash: row.hash,
          user_id: Ids.UserId.make(row.user_id),
          expires_at: Option.map(Option.fromNullable(row.expires_at), timeOf)
        }))
      ),
      storageError("SqlTokenStore.findByHash")
    )

  const add: Ports.TokenStore["Type"]["add"] = (input) =>
    sql`INSERT INTO tokens (hash, user_id, expires_at, created_at)
      VALUES (${input.hash}, ${input.user_id}, ${Option.getOrNull(Option.map(input.expires_at, timeText))}, ${timeText(input.now)})
      ON CONFLICT (hash) DO NOTHING`.pipe(Effect.asVoid, storageError("SqlTokenStore.add"))

  const remove = (hash: string) =>
    sql<{ hash: string }>`DELETE FROM tokens WHERE hash = ${hash} RETURNING hash`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlTokenStore.remove")
    )

  return Ports.TokenStore.of({ findByHash, add, remove })
})

export const layer = Layer.effect(Ports.TokenStore, make)
