/**
 * AccountStore on @effect/sql.
 */
import { SqlClient } from "@effect/sql"
import { Account, type Audit, Ids, Ports, Secret, Trusted } from "@hosting/core"
import { DateTime, Effect, Layer, Option, Redacted } from "effect"
import { storageError, timeOf, timeText, trusted } from "./internal/sql.js"

interface AccountRow {
  readonly id: string
  readonly name: string
  readonly created_at: string
}

const toAccount = (row: AccountRow) =>
  Trusted.make(Account.Account, {
    id: Ids.AccountId.make(row.id),
    name: Ids.AccountName.make(row.name),
    created_at: timeOf(row.created_at)
  })

export const make: Effect.Effect<Ports.AccountStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const firstAccount = (rows: ReadonlyArray<AccountRow>) => Option.map(Option.fromNullable(rows[0]), toAccount)

  const findByName = (name: Ids.AccountName) =>
    sql<AccountRow>`SELECT id, name, created_at FROM accounts WHERE name = ${name}`.pipe(
      Effect.map(firstAccount),
      storageError("SqlAccountStore.findByName")
    )

  const findById = (id: Ids.AccountId) =>
    sql<AccountRow>`SELECT id, name, created_at FROM accounts WHERE id = ${id}`.pipe(
      Effect.map(firstAccount),
      storageError("SqlAccountStore.findById")
    )

  const ensure: Ports.AccountStore["Type"]["ensure"] = Effect.fnUntraced(
    function*(input: Parameters<Ports.AccountStore["Type"]["ensure"]>[0]) {
      yield* sql`INSERT INTO accounts (id, name, created_at)
        VALUES (${input.id}, ${input.name}, ${timeText(input.now)})
        ON CONFLICT (name) DO NOTHING`
      const rows = yield* sql<AccountRow>`SELECT id, name, created_at FROM accounts WHERE name = ${input.name}`
      return toAccount(rows[0]!)
    },
    storageError("SqlAccountStore.ensure")
  )

  const create: Ports.AccountStore["Type"]["create"] = (input) =>
    sql<AccountRow>`INSERT INTO accounts (id, name, created_at)
      VALUES (${input.id}, ${input.name}, ${timeText(input.now)})
      ON CONFLICT (name) DO NOTHING RETURNING id, name, created_at`.pipe(
      Effect.map(firstAccount),
      storageError("SqlAccountStore.create")
    )

  const rename = Effect.fnUntraced(function*(id: Ids.AccountId, name: Ids.AccountName) {
    const taken = yield* sql<{ id: string }>`SELECT id FROM accounts WHERE name = ${name}`
    if (taken.length > 0) return taken[0]!.id === id
    yield* sql`UPDATE accounts SET name = ${name} WHERE id = ${id}`
    return true
  }, storageError("SqlAccountStore.rename"))

  const findUser = (id: Ids.UserId) =>
    sql<{ id: string; name: string }>`SELECT id, name FROM users WHERE id = ${id}`.pipe(
      Effect.map((rows) =>
        Option.map(Option.fromNullable(rows[0]), (row) => Trusted.make(Account.User, { id: Ids.UserId.make(row.id), name: row.name }))
      ),
      storageError("SqlAccountStore.findUser")
    )

  const upsertUser = Effect.fnUntraced(function*(user: Account.User) {
    const now = timeText(yield* DateTime.now)
    yield* sql`INSERT INTO users (id, name, created_at) VALUES (${user.id}, ${user.name}, ${now})
      ON CONFLICT (id) DO UPDATE SET name = excluded.name`
  }, storageError("SqlAccountStore.upsertUser"))

  const hasUsers = sql<{ found: number }>`SELECT 1 AS found FROM users LIMIT 1`.pipe(
    Effect.map((rows) => rows.length > 0),
    storageError("SqlAccountStore.hasUsers")
  )

  const addUser: Ports.AccountStore["Type"]["addUser"] = (input) =>
    sql`INSERT INTO users (id, name, created_at, instance_admin)
      VALUES (${input.id}, ${input.name}, ${timeText(input.now)}, ${input.instance_admin ? 1 : 0})`.pipe(
      Effect.asVoid,
      storageError("SqlAccountStore.addUser")
    )

  const addSetupCode: Ports.AccountStore["Type"]["addSetupCode"] = (input) =>
    sql`INSERT INTO setup_codes (hash, created_at) VALUES (${input.hash}, ${timeText(input.now)})
      ON CONFLICT (hash) DO NOTHING`.pipe(Effect.asVoid, storageError("SqlAccountStore.addSetupCode"))

  // Spent only when its hash is kept (deleting the row first: a concurrent spend of the same code waits for it,
  // then finds nothing); then every other process's code goes with it.
  const spendSetupCode = Effect.fnUntraced(function*(hash: string) {
    const found = yield* sql<{ hash: string }>`DELETE FROM setup_codes WHERE hash = ${hash} RETURNING hash`
    if (found.length === 0) return false
    yield* sql`DELETE FROM setup_codes`
    return true
  }, storageError("SqlAccountStore.spendSetupCode"))

  interface InvitationRow {
    readonly id: string
    readonly account_id: string
    readonly code_hash: string
    readonly email: string | null
    readonly role: Ids.Role
    readonly created_by: string
    readonly created_at: string
    readonly expires_at: string
  }
  const toInvitation = (row: InvitationRow): Ports.Invitation => ({
    id: row.id,
    account_id: Ids.AccountId.make(row.account_id, trusted),
    code_hash: row.code_hash,
    email: Option.fromNullable(row.email),
    role: row.role,
    created_by: Ids.UserId.make(row.created_by, trusted),
    created_at: timeOf(row.created_at),
    expires_at: timeOf(row.expires_at)
  })

  const addInvitation = (i: Ports.Invitation) =>
    sql`INSERT INTO invitations (id, account_id, code_hash, email, role, created_by, created_at, expires_at)
      VALUES (${i.id}, ${i.account_id}, ${i.code_hash}, ${Option.getOrNull(i.email)}, ${i.role}, ${i.created_by}, ${
      timeText(i.created_at)
    }, ${timeText(i.expires_at)})`.pipe(Effect.asVoid, storageError("SqlAccountStore.addInvitation"))

  const invitationsOf = (accountId: Ids.AccountId, now: DateTime.Utc) =>
    sql<InvitationRow>`SELECT id, account_id, code_hash, email, role, created_by, created_at, expires_at FROM invitations
      WHERE account_id = ${accountId} AND expires_at > ${timeText(now)} ORDER BY created_at DESC, id DESC`.pipe(
      Effect.map((rows) => rows.map(toInvitation)),
      storageError("SqlAccountStore.invitationsOf")
    )

  const removeInvitation = (accountId: Ids.AccountId, id: string) =>
    sql<{ id: string }>`DELETE FROM invitations WHERE account_id = ${accountId} AND id = ${id} RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlAccountStore.removeInvitation")
    )

  // Removed only while valid: two invitees racing for one code get it once.
  const takeInvitation = (codeHash: string, now: DateTime.Utc) =>
    sql<InvitationRow>`DELETE FROM invitations WHERE code_hash = ${codeHash} AND expires_at > ${timeText(now)}
      RETURNING id, account_id, code_hash, email, role, created_by, created_at, expires_at`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toInvitation)),
      storageError("SqlAccountStore.takeInvitation")
    )

  const findIdentity = (issuer: string, subject: string) =>
    sql<{ user_id: string }>`SELECT user_id FROM user_identities WHERE issuer = ${issuer} AND subject = ${subject}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (row) => Ids.UserId.make(row.user_id, trusted))),
      storageError("SqlAccountStore.findIdentity")
    )

  const linkIdentity: Ports.AccountStore["Type"]["linkIdentity"] = (input) =>
    sql<{ subject: string }>`INSERT INTO user_identities (issuer, subject, user_id, email, created_at)
      VALUES (${input.issuer}, ${input.subject}, ${input.user_id}, ${Option.getOrNull(input.email)}, ${timeText(input.now)})
      ON CONFLICT (issuer, subject) DO NOTHING RETURNING subject`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlAccountStore.linkIdentity")
    )

  const liveDeployments = (accountId: Ids.AccountId) =>
    sql<{ id: string }>`SELECT id FROM deployments
      WHERE (account_id = ${accountId} OR publisher_id = ${accountId}) AND undeployed_at IS NULL ORDER BY deployed_at`.pipe(
      Effect.map((rows) => rows.map((row) => row.id)),
      storageError("SqlAccountStore.liveDeployments")
    )

  // Children before parents, as the foreign keys need; meant to run in the caller's transaction.
  const deleteAccount = Effect.fnUntraced(function*(accountId: Ids.AccountId) {
    const found = yield* sql<{ id: string }>`SELECT id FROM accounts WHERE id = ${accountId}`
    if (found.length === 0) return Option.none()
    const deployments = sql`SELECT id FROM deployments WHERE account_id = ${accountId} OR publisher_id = ${accountId}`
    yield* sql`DELETE FROM messages WHERE conversation_id IN (SELECT id FROM conversations WHERE deployment_id IN (${deployments}))`
    yield* sql`DELETE FROM conversations WHERE deployment_id IN (${deployments})`
    const files = yield* sql<{ deployment_id: string; owner_id: string; key: string; status: string }>`
      DELETE FROM files WHERE deployment_id IN (${deployments}) RETURNING deployment_id, owner_id, key, status`
    yield* sql`DELETE FROM traces WHERE publisher_id = ${accountId} OR account_id = ${accountId}`
    yield* sql`DELETE FROM trace_spans WHERE publisher_id = ${accountId}`
    yield* sql`DELETE FROM deployments WHERE account_id = ${accountId} OR publisher_id = ${accountId}`
    yield* sql`DELETE FROM builds WHERE agent_id IN (SELECT id FROM agents WHERE account_id = ${accountId})`
    yield* sql`DELETE FROM agents WHERE account_id = ${accountId}`
    yield* sql`DELETE FROM memberships WHERE account_id = ${accountId}`
    yield* sql`DELETE FROM invitations WHERE account_id = ${accountId}`
    yield* sql`DELETE FROM account_secrets WHERE account_id = ${accountId}`
    yield* sql`DELETE FROM audit_log WHERE account_id = ${accountId}`
    yield* sql`DELETE FROM events WHERE account_id = ${accountId}`
    yield* sql`DELETE FROM accounts WHERE id = ${accountId}`
    return Option.some(files.map((f) => ({
      deployment_id: f.deployment_id,
      owner_id: Ids.UserId.make(f.owner_id, trusted),
      key: f.key,
      ready: f.status === "ready"
    })))
  }, storageError("SqlAccountStore.deleteAccount"))

  const putSecret: Ports.AccountStore["Type"]["putSecret"] = Effect.fnUntraced(
    function*(input: Parameters<Ports.AccountStore["Type"]["putSecret"]>[0]) {
      const now = timeText(input.now)
      const existing = yield* sql<{ name: string }>`SELECT name FROM account_secrets
        WHERE account_id = ${input.account_id} AND name = ${input.name}`
      yield* sql`INSERT INTO account_secrets (account_id, name, value, created_at, updated_at)
        VALUES (${input.account_id}, ${input.name}, ${Redacted.value(input.value)}, ${now}, ${now})
        ON CONFLICT (account_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
      return { created: existing.length === 0 }
    },
    storageError("SqlAccountStore.putSecret")
  )

  const secretsOf = (accountId: Ids.AccountId) =>
    sql<{ name: string; created_at: string; updated_at: string }>`SELECT name, created_at, updated_at FROM account_secrets
      WHERE account_id = ${accountId} ORDER BY name`.pipe(
      Effect.map((rows) =>
        rows.map((row) =>
          Trusted.make(Secret.SecretSummary, {
            name: Secret.SecretName.make(row.name, trusted),
            created_at: timeOf(row.created_at),
            updated_at: timeOf(row.updated_at)
          })
        )
      ),
      storageError("SqlAccountStore.secretsOf")
    )

  const secretValues: Ports.AccountStore["Type"]["secretValues"] = (accountId, names) =>
    names.length === 0 ? Effect.succeed(new Map()) : sql<{ name: string; value: string }>`SELECT name, value FROM account_secrets
      WHERE account_id = ${accountId} AND ${sql.in("name", names)}`.pipe(
      Effect.map((rows) => new Map(rows.map((row) => [Secret.SecretName.make(row.name, trusted), Redacted.make(row.value)] as const))),
      storageError("SqlAccountStore.secretValues")
    )

  const removeSecret = (accountId: Ids.AccountId, name: Secret.SecretName) =>
    sql<{ name: string }>`DELETE FROM account_secrets WHERE account_id = ${accountId} AND name = ${name} RETURNING name`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlAccountStore.removeSecret")
    )

  const recordAudit: Ports.AccountStore["Type"]["recordAudit"] = (entries) =>
    entries.length === 0 ? Effect.void : sql`INSERT INTO audit_log ${
      sql.insert(entries.map((e) => ({
        account_id: e.account_id,
        at: timeText(e.at),
        actor: e.actor,
        action: e.action,
        target: e.target,
        details: e.details
      })))
    }`.pipe(Effect.asVoid, storageError("SqlAccountStore.recordAudit"))

  const auditOf: Ports.AccountStore["Type"]["auditOf"] = (accountId, page) =>
    Effect.all([
      sql<{ id: number | string; at: string; actor: string; action: Audit.AuditAction; target: string; details: string }>`
        SELECT id, at, actor, action, target, details FROM audit_log WHERE account_id = ${accountId}
        ORDER BY id DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
      sql<{ total: number | string }>`SELECT COUNT(*) AS total FROM audit_log WHERE account_id = ${accountId}`
    ]).pipe(
      Effect.map(([rows, [count]]) => ({
        entries: rows.map((row) => ({
          id: Number(row.id),
          account_id: accountId,
          at: timeOf(row.at),
          actor: Ids.UserId.make(row.actor, trusted),
          action: row.action,
          target: row.target,
          details: row.details
        })),
        total: Number(count?.total ?? 0)
      })),
      storageError("SqlAccountStore.auditOf")
    )

  const setMembership = (accountId: Ids.AccountId, userId: Ids.UserId, role: Ids.Role) =>
    sql`INSERT INTO memberships (account_id, user_id, role) VALUES (${accountId}, ${userId}, ${role})
      ON CONFLICT (account_id, user_id) DO UPDATE SET role = excluded.role`.pipe(
      Effect.asVoid,
      storageError("SqlAccountStore.setMembership")
    )

  // SQLite runs one write transaction at a time: only Postgres needs the lock.
  const lockMembers = (accountId: Ids.AccountId) =>
    sql.onDialectOrElse({
      pg: () => sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`,
      orElse: () => Effect.succeed([])
    }).pipe(Effect.asVoid, storageError("SqlAccountStore.lockMembers"))

  const removeMembership = (accountId: Ids.AccountId, userId: Ids.UserId) =>
    sql<{ user_id: string }>`DELETE FROM memberships WHERE account_id = ${accountId} AND user_id = ${userId} RETURNING user_id`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlAccountStore.removeMembership")
    )

  const membershipsOf = (userId: Ids.UserId) =>
    sql<{ account_id: string; name: string; role: Ids.Role }>`
      SELECT m.account_id, a.name, m.role FROM memberships m JOIN accounts a ON a.id = m.account_id
      WHERE m.user_id = ${userId} ORDER BY a.name`.pipe(
      Effect.map((rows) =>
        rows.map((row) =>
          Trusted.make(Account.Membership, {
            account_id: Ids.AccountId.make(row.account_id),
            account: Ids.AccountName.make(row.name),
            role: row.role
          })
        )
      ),
      storageError("SqlAccountStore.membershipsOf")
    )

  const membersOf = (accountId: Ids.AccountId) =>
    sql<{ user_id: string; name: string; role: Ids.Role }>`
      SELECT m.user_id, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id
      WHERE m.account_id = ${accountId} ORDER BY u.id`.pipe(
      Effect.map((rows) =>
        rows.map((row) => Trusted.make(Account.Member, { user_id: Ids.UserId.make(row.user_id), name: row.name, role: row.role }))
      ),
      storageError("SqlAccountStore.membersOf")
    )

  return Ports.AccountStore.of({
    findByName,
    findById,
    ensure,
    create,
    rename,
    findUser,
    upsertUser,
    hasUsers,
    addUser,
    addSetupCode,
    spendSetupCode,
    findIdentity,
    linkIdentity,
    liveDeployments,
    deleteAccount,
    putSecret,
    secretsOf,
    secretValues,
    removeSecret,
    recordAudit,
    auditOf,
    addInvitation,
    invitationsOf,
    removeInvitation,
    takeInvitation,
    setMembership,
    lockMembers,
    removeMembership,
    membershipsOf,
    membersOf
  })
})

export const layer = Layer.effect(Ports.AccountStore, make)
