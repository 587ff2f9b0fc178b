/**
 * TokenStore on @effect/sql: token hashes only, never tokens.
 */
import { SqlClient } from "@effect/sql"
import { Account, Ids, Ports } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText, trusted } from "./internal/sql.js"

/** A token with its user and one of the user's memberships (none: the columns of the membership are null). */
interface PrincipalRow {
  readonly hash: string
  readonly expires_at: string | null
  readonly user_id: string
  readonly user_name: string
  readonly account_id: string | null
  readonly account: string | null
  readonly role: Ids.Role | null
}

const toPrincipal = (first: PrincipalRow, rows: ReadonlyArray<PrincipalRow>) => ({
  hash: first.hash,
  expires_at: Option.map(Option.fromNullable(first.expires_at), timeOf),
  principal: {
    user: new Account.User({ id: Ids.UserId.make(first.user_id, trusted), name: first.user_name }, trusted),
    memberships: rows.flatMap((row) =>
      row.account_id === null || row.account === null || row.role === null ? [] : [
        new Account.Membership({
          account_id: Ids.AccountId.make(row.account_id, trusted),
          account: Ids.AccountName.make(row.account, trusted),
          role: row.role
        }, trusted)
      ]
    )
  }
})

export const make: Effect.Effect<Ports.TokenStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // The memberships join inside the outer join, so that a user without any still has their row.
  const findPrincipal = (hash: string) =>
    sql<PrincipalRow>`SELECT t.hash, t.expires_at, u.id AS user_id, u.name AS user_name, m.account_id, a.name AS account, m.role
      FROM tokens t JOIN users u ON u.id = t.user_id
      LEFT JOIN (memberships m JOIN accounts a ON a.id = m.account_id) ON m.user_id = u.id
      WHERE t.hash = ${hash} ORDER BY a.name`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (first) => toPrincipal(first, rows))),
      storageError("SqlTokenStore.findPrincipal")
    )

  const insert = (input: Parameters<Ports.TokenStore["Type"]["add"]>[0]) => {
    const values = sql`${input.hash}, ${input.user_id}, ${Option.getOrNull(Option.map(input.expires_at, timeText))}, ${timeText(input.now)}`
    return Option.match(input.parent_hash, {
      onNone: () =>
        sql<{ hash: string }>`INSERT INTO tokens (hash, user_id, expires_at, created_at) VALUES (${values})
          ON CONFLICT (hash) DO NOTHING RETURNING hash`,
      // Only while the parent is stored (the foreign key removes the token with it later).
      onSome: (parent) =>
        sql<{ hash: string }>`INSERT INTO tokens (hash, user_id, expires_at, created_at, parent_hash)
          SELECT ${values}, hash FROM tokens WHERE hash = ${parent}
          ON CONFLICT (hash) DO NOTHING RETURNING hash`
    })
  }

  // Nothing inserted: the token was there already (true), or its parent was not (false).
  const add: Ports.TokenStore["Type"]["add"] = (input) =>
    insert(input).pipe(
      Effect.flatMap((rows) =>
        rows.length > 0
          ? Effect.succeed(true)
          : Effect.map(sql`SELECT hash FROM tokens WHERE hash = ${input.hash}`, (found) => found.length > 0)
      ),
      storageError("SqlTokenStore.add")
    )

  // The tokens made from it, and the device logins decided with it, go with it (ON DELETE CASCADE).
  const remove = (hash: string) =>
    sql<{ hash: string }>`DELETE FROM tokens WHERE hash = ${hash} RETURNING hash`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlTokenStore.remove")
    )

  return Ports.TokenStore.of({ findPrincipal, add, remove })
})

export const layer = Layer.effect(Ports.TokenStore, make)
