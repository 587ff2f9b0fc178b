/**
 * TokenStore on @effect/sql: token hashes only, never tokens.
 */
import { SqlClient } from "@effect/sql"
import { Account, Ids, Ports, type Token, Trusted } from "@hosting/core"
import { type DateTime, Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText, trusted } from "./internal/sql.js"

/** A token with its user and one of the user's memberships (none: the columns of the membership are null). */
interface PrincipalRow {
  readonly hash: string
  readonly expires_at: string | null
  readonly id: string | null
  readonly scopes: string | null
  readonly accounts: string | null
  readonly user_id: string
  readonly user_name: string
  readonly account_id: string | null
  readonly account: string | null
  readonly role: Ids.Role | null
}

/** A stored space-separated list (NULL: no limit). */
const listOf = <A extends string>(text: string | null): Option.Option<ReadonlyArray<A>> =>
  text === null ? Option.none() : Option.some(text === "" ? [] : (text.split(" ") as Array<A>))

/** A list as stored. */
const listText = (list: Option.Option<ReadonlyArray<string>>): string | null => Option.getOrNull(Option.map(list, (items) => items.join(" ")))

const toPrincipal = (first: PrincipalRow, rows: ReadonlyArray<PrincipalRow>) => ({
  hash: first.hash,
  expires_at: Option.map(Option.fromNullable(first.expires_at), timeOf),
  limits: {
    id: Option.fromNullable(first.id),
    scopes: listOf<Token.Scope>(first.scopes),
    accounts: listOf<Ids.AccountId>(first.accounts)
  },
  principal: {
    user: Trusted.make(Account.User, { id: Ids.UserId.make(first.user_id, trusted), name: first.user_name }),
    memberships: rows.flatMap((row) =>
      row.account_id === null || row.account === null || row.role === null ? [] : [
        Trusted.make(Account.Membership, {
          account_id: Ids.AccountId.make(row.account_id, trusted),
          account: Ids.AccountName.make(row.account, trusted),
          role: row.role
        })
      ]
    )
  }
})

/**
 * The statement of a token's principal (exported for the test of its plan):
 * the token, its user, and the user's memberships with their accounts' names.
 * Both are outer joins, so that a user without any membership still has a
 * row; a membership always has its account (a foreign key). Written as a
 * join of the memberships and the accounts nested inside one outer join,
 * SQLite made that inner join for every membership of the server first
 * (10.7 ms for a token at 20,000 memberships, against 16 µs now).
 */
export const principalStatement = (sql: SqlClient.SqlClient, hash: string) =>
  sql<PrincipalRow>`SELECT t.hash, t.expires_at, t.id, t.scopes, t.accounts, u.id AS user_id, u.name AS user_name, m.account_id, a.name AS account, m.role
    FROM tokens t JOIN users u ON u.id = t.user_id
    LEFT JOIN memberships m ON m.user_id = u.id
    LEFT JOIN accounts a ON a.id = m.account_id
    WHERE t.hash = ${hash} ORDER BY a.name`

export const make: Effect.Effect<Ports.TokenStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findPrincipal = (hash: string) =>
    principalStatement(sql, hash).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (first) => toPrincipal(first, rows))),
      storageError("SqlTokenStore.findPrincipal")
    )

  const insert = (input: Parameters<Ports.TokenStore["Type"]["add"]>[0]) => {
    const { limits, personal } = input
    const head = sql`${input.hash}, ${input.user_id}, ${Option.getOrNull(Option.map(input.expires_at, timeText))}, ${
      timeText(input.now)
    }, ${personal?.id ?? null}, ${personal?.name ?? null}`
    const columns = sql`hash, user_id, expires_at, created_at, id, name, scopes, accounts`
    return Option.match(input.parent_hash, {
      onNone: () =>
        sql<{ hash: string }>`INSERT INTO tokens (${columns}) VALUES (${head}, ${limits === undefined ? null : listText(limits.scopes)}, ${
          limits === undefined ? null : listText(limits.accounts)
        }) ON CONFLICT (hash) DO NOTHING RETURNING hash`,
      // Only while the parent is stored (the foreign key removes the token with it later); the parent's limits
      // hold unless the token is given its own.
      onSome: (parent) =>
        sql<{ hash: string }>`INSERT INTO tokens (${columns}, parent_hash)
          SELECT ${head}, ${limits === undefined ? sql`scopes` : sql`${listText(limits.scopes)}`}, ${
          limits === undefined ? sql`accounts` : sql`${listText(limits.accounts)}`
        }, hash FROM tokens WHERE hash = ${parent}
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

  const listPersonal = (userId: Ids.UserId) =>
    sql<{
      id: string
      name: string
      scopes: string | null
      accounts: string | null
      created_at: string
      expires_at: string | null
      last_used_at: string | null
    }>`SELECT id, name, scopes, accounts, created_at, expires_at, last_used_at FROM tokens
      WHERE user_id = ${userId} AND id IS NOT NULL ORDER BY created_at DESC, id DESC`.pipe(
      Effect.map((rows) =>
        rows.map((row): Ports.PersonalToken => ({
          id: row.id,
          name: row.name,
          scopes: listOf<Token.Scope>(row.scopes),
          accounts: listOf<Ids.AccountId>(row.accounts),
          created_at: timeOf(row.created_at),
          expires_at: Option.map(Option.fromNullable(row.expires_at), timeOf),
          last_used_at: Option.map(Option.fromNullable(row.last_used_at), timeOf)
        }))
      ),
      storageError("SqlTokenStore.listPersonal")
    )

  const removePersonal = (userId: Ids.UserId, id: string) =>
    sql<{ name: string; accounts: string | null }>`DELETE FROM tokens WHERE user_id = ${userId} AND id = ${id}
      RETURNING name, accounts`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row) => ({ name: row.name, accounts: listOf<Ids.AccountId>(row.accounts) }))
      ),
      storageError("SqlTokenStore.removePersonal")
    )

  const touch = (hash: string, now: DateTime.Utc) =>
    sql`UPDATE tokens SET last_used_at = ${timeText(now)} WHERE hash = ${hash}`.pipe(
      Effect.asVoid,
      storageError("SqlTokenStore.touch")
    )

  return Ports.TokenStore.of({ findPrincipal, add, remove, listPersonal, removePersonal, touch })
})

export const layer = Layer.effect(Ports.TokenStore, make)
