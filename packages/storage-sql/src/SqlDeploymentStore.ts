/**
 * DeploymentStore on @effect/sql.
 */
import { SqlClient } from "@effect/sql"
import { Deployment, Ids, Ports, Trusted } from "@hosting/core"
import { type DateTime, Effect, Layer, Option } from "effect"
import { pageOverKeys, storageError, timeOf, timeText, trusted } from "./internal/sql.js"

interface DeploymentRow {
  readonly id: string
  readonly account_id: string
  readonly account: string
  readonly publisher_id: string
  readonly publisher: string
  readonly agent_name: string
  readonly build_id: string
  readonly namespace: string
  readonly status: string
  readonly status_reason: string | null
  readonly status_message: string | null
  readonly deployed_at: string
  readonly undeployed_at: string | null
  readonly spec: string
  readonly rolled_back_from: string | null
  readonly follow: string | null
  readonly rolled_forward_from: string | null
  readonly concurrent_send: Deployment.ConcurrentSend | null
  readonly env: string | null
}

const toRecord = (row: DeploymentRow) =>
  Trusted.make(Deployment.DeploymentRecord, {
    id: Deployment.DeploymentId.make(row.id, trusted),
    account_id: Ids.AccountId.make(row.account_id, trusted),
    account: Ids.AccountName.make(row.account, trusted),
    publisher_id: Ids.AccountId.make(row.publisher_id, trusted),
    publisher: Ids.AccountName.make(row.publisher, trusted),
    agent_name: Ids.AgentName.make(row.agent_name, trusted),
    build_id: Ids.BuildId.make(row.build_id, trusted),
    namespace: row.namespace,
    status: row.status,
    ...(row.status_reason === null ? {} : { status_reason: row.status_reason }),
    ...(row.status_message === null ? {} : { status_message: row.status_message }),
    deployed_at: timeOf(row.deployed_at),
    undeployed_at: Option.map(Option.fromNullable(row.undeployed_at), timeOf),
    spec: JSON.parse(row.spec),
    ...(row.rolled_back_from === null ? {} : { rolled_back_from: Deployment.DeploymentId.make(row.rolled_back_from, trusted) }),
    ...(row.follow === null ? {} : { follow: JSON.parse(row.follow) as Deployment.Follow }),
    ...(row.rolled_forward_from === null ? {} : { rolled_forward_from: Deployment.DeploymentId.make(row.rolled_forward_from, trusted) }),
    ...(row.concurrent_send === null ? {} : { concurrent_send: row.concurrent_send }),
    ...(row.env === null ? {} : { env: JSON.parse(row.env) })
  })

/** The columns of a deployment row (`d`), with its account's and publisher's names. */
const columns = `d.id, d.account_id, a.name AS account, d.publisher_id, p.name AS publisher, d.agent_name,
      d.build_id, d.namespace, d.status, d.deployed_at, d.undeployed_at, d.spec, d.rolled_back_from, d.follow, d.rolled_forward_from,
      d.concurrent_send, d.env, d.status_reason, d.status_message`

/** The names of a deployment's account and publisher. */
const names = "JOIN accounts a ON a.id = d.account_id JOIN accounts p ON p.id = d.publisher_id"

/** The columns of a deployment row, with its account's and publisher's names. */
const selectOf = (sql: SqlClient.SqlClient) => sql.literal(`SELECT ${columns} FROM deployments d ${names}`)

/**
 * The deployments of an agent that some of `accountIds` made, most recent
 * first: read in that order from the agent's index (migration 0019).
 */
export const agentHistoryStatement = (
  sql: SqlClient.SqlClient,
  publisherId: Ids.AccountId,
  agentName: Ids.AgentName,
  accountIds: ReadonlyArray<Ids.AccountId>
) =>
  sql<DeploymentRow>`${selectOf(sql)} WHERE d.publisher_id = ${publisherId} AND d.agent_name = ${agentName}
    AND ${sql.in("d.account_id", accountIds)} ORDER BY d.deployed_at DESC, d.id DESC`

/**
 * The statements of a namespace's newest deployment and of its live ones
 * (exported for the test of their plans), newest first as their indexes
 * hold them: the newest searched by the namespace's index (migration 0021),
 * the live ones by the index of its live deployments (migration 0026).
 */
export const newestInNamespaceStatement = (sql: SqlClient.SqlClient, namespace: string) =>
  sql<DeploymentRow>`${selectOf(sql)} WHERE d.namespace = ${namespace} ORDER BY d.deployed_at DESC, d.id DESC LIMIT 1`

export const liveInNamespaceStatement = (sql: SqlClient.SqlClient, namespace: string) =>
  sql<DeploymentRow>`${selectOf(sql)} WHERE d.namespace = ${namespace} AND d.undeployed_at IS NULL ORDER BY d.deployed_at DESC`

/**
 * The statement of the other accounts that run an agent (exported for the
 * test of its plan): read from the index of live deployments by agent and
 * account (migration 0023), in its order.
 */
export const accountsDeployingStatement = (sql: SqlClient.SqlClient, publisherId: string, agentName: string) =>
  sql<{ account_id: string }>`SELECT DISTINCT account_id FROM deployments
    WHERE publisher_id = ${publisherId} AND agent_name = ${agentName} AND undeployed_at IS NULL
      AND account_id <> ${publisherId}
    ORDER BY account_id`

/**
 * The statement of a page of the live deployments of some accounts, by id
 * (exported for the test of its plans). Each account's first `limit` are
 * read in id order from the index of live deployments by account
 * (migration 0025), and the page is taken from their merge. Asked of all
 * the accounts at once, Postgres walked every deployment of the server by
 * id and dropped the ones of other accounts and the ended ones (24 to 36 ms
 * for an account with 23,000 deployments, 20 of them live, against 0.7),
 * and SQLite read every deployment of the accounts, ended ones included.
 * At most `keysPerStatement` accounts.
 */
export const liveOfAccountsStatement = (
  sql: SqlClient.SqlClient,
  accountIds: ReadonlyArray<string>,
  after: string | undefined,
  limit: number
) => {
  const ofAccount = (accountId: string) =>
    sql`SELECT id FROM (SELECT id FROM deployments WHERE account_id = ${accountId} AND undeployed_at IS NULL
      AND id > ${after ?? ""} ORDER BY id LIMIT ${limit}) AS live`
  return sql<DeploymentRow>`SELECT ${sql.literal(columns)} FROM (${sql.join(" UNION ALL ", false)(accountIds.map(ofAccount))}) AS l
    JOIN deployments d ON d.id = l.id ${sql.literal(names)} ORDER BY d.id LIMIT ${limit}`
}

/** Every status a deployment can have: words that may be written into a statement as they are. */
const knownStatuses: ReadonlySet<string> = new Set(Object.values(Deployment.DeploymentStatus))

/**
 * The statement of a page of live deployments with the given statuses
 * (exported for the test of its plan). Statuses of the closed set are
 * written into the statement rather than bound: SQLite uses the partial
 * index of unsettled deployments (migration 0015) only where the query's
 * condition is its condition as written, which a bound parameter never is,
 * and the poll of rollouts walked every deployment ever made instead
 * (1.5 ms a round at 10,000 deployments, against 78 µs).
 */
export const liveWithStatusStatement = (
  sql: SqlClient.SqlClient,
  statuses: ReadonlyArray<string>,
  after: string | undefined,
  limit: number
) => {
  const statusIn = statuses.every((status) => knownStatuses.has(status))
    ? sql.literal(`d.status IN (${statuses.map((status) => `'${status}'`).join(", ")})`)
    : sql.in("d.status", statuses)
  return sql<DeploymentRow>`${selectOf(sql)} WHERE d.undeployed_at IS NULL AND ${statusIn}
    AND d.id > ${after ?? ""} ORDER BY d.id LIMIT ${limit}`
}

export const make: Effect.Effect<Ports.DeploymentStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const upsert: Ports.DeploymentStore["Type"]["upsert"] = (r) =>
    sql`INSERT INTO deployments (id, account_id, publisher_id, agent_name, build_id, namespace, status, deployed_at, undeployed_at, spec,
        rolled_back_from, follow, rolled_forward_from, concurrent_send, env, status_reason, status_message)
      VALUES (${r.id}, ${r.account_id}, ${r.publisher_id}, ${r.agent_name}, ${r.build_id}, ${r.namespace}, ${r.status},
        ${timeText(r.deployed_at)}, ${Option.getOrNull(Option.map(r.undeployed_at, timeText))}, ${JSON.stringify(r.spec)},
        ${r.rolled_back_from ?? null}, ${r.follow === undefined ? null : JSON.stringify(r.follow)}, ${r.rolled_forward_from ?? null},
        ${r.concurrent_send ?? null}, ${r.env === undefined ? null : JSON.stringify(r.env)}, ${r.status_reason ?? null},
        ${r.status_message ?? null})
      ON CONFLICT (id) DO UPDATE SET account_id = excluded.account_id, publisher_id = excluded.publisher_id,
        agent_name = excluded.agent_name, build_id = excluded.build_id, namespace = excluded.namespace,
        status = excluded.status, deployed_at = excluded.deployed_at, undeployed_at = excluded.undeployed_at,
        spec = excluded.spec, rolled_back_from = excluded.rolled_back_from, follow = excluded.follow,
        rolled_forward_from = excluded.rolled_forward_from, env = excluded.env, status_reason = excluded.status_reason,
        status_message = excluded.status_message`.pipe(Effect.asVoid, storageError("SqlDeploymentStore.upsert"))

  const select = selectOf(sql)

  const findById = (id: Deployment.DeploymentId) =>
    sql<DeploymentRow>`${select} WHERE d.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
      storageError("SqlDeploymentStore.findById")
    )

  const findByNamespace = (namespace: string) =>
    newestInNamespaceStatement(sql, namespace).pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
      storageError("SqlDeploymentStore.findByNamespace")
    )

  const liveInNamespace = (namespace: string) =>
    liveInNamespaceStatement(sql, namespace).pipe(
      Effect.map((rows) => rows.map(toRecord)),
      storageError("SqlDeploymentStore.liveInNamespace")
    )

  const listForAgent = (publisherId: Ids.AccountId, agentName: Ids.AgentName, accountIds: ReadonlyArray<Ids.AccountId>) =>
    accountIds.length === 0
      ? Effect.succeed([])
      : agentHistoryStatement(sql, publisherId, agentName, accountIds).pipe(
          Effect.map((rows) => rows.map(toRecord)),
          storageError("SqlDeploymentStore.listForAgent")
        )

  const listForAccount: Ports.DeploymentStore["Type"]["listForAccount"] = (accountId, filter, page) => {
    const status = filter.status
    const kept = status === undefined
      ? sql`d.account_id = ${accountId}`
      : status === "live"
      ? sql`d.account_id = ${accountId} AND d.undeployed_at IS NULL`
      : status === "ended"
      ? sql`d.account_id = ${accountId} AND d.undeployed_at IS NOT NULL`
      : sql`d.account_id = ${accountId} AND d.status = ${status}`
    return Effect.all([
      sql<DeploymentRow>`${select} WHERE ${kept} ORDER BY d.deployed_at DESC, d.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`,
      sql<{ total: number | string }>`SELECT COUNT(*) AS total FROM deployments d WHERE ${kept}`
    ]).pipe(
      Effect.map(([rows, [count]]) => ({ deployments: rows.map(toRecord), total: Number(count?.total ?? 0) })),
      storageError("SqlDeploymentStore.listForAccount")
    )
  }

  const liveOfAccounts: Ports.DeploymentStore["Type"]["liveOfAccounts"] = (accountIds, after, limit) =>
    pageOverKeys(
      accountIds,
      { skip: 0, take: limit },
      (x: DeploymentRow, y: DeploymentRow) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
      (chunk, _skip, take) => liveOfAccountsStatement(sql, chunk, after, take)
    ).pipe(
      Effect.map((rows) => rows.map(toRecord)),
      storageError("SqlDeploymentStore.liveOfAccounts")
    )

  const markUndeployed = (id: Deployment.DeploymentId, status: string, at: DateTime.Utc) =>
    sql`UPDATE deployments SET status = ${status}, undeployed_at = ${timeText(at)}, status_reason = NULL, status_message = NULL
      WHERE id = ${id}`.pipe(
      Effect.asVoid,
      storageError("SqlDeploymentStore.markUndeployed")
    )

  const listFollowing = (publisherId: Ids.AccountId, agentName: Ids.AgentName) =>
    sql<DeploymentRow>`${select} WHERE d.publisher_id = ${publisherId} AND d.agent_name = ${agentName}
        AND d.follow IS NOT NULL AND d.undeployed_at IS NULL ORDER BY d.deployed_at, d.id`.pipe(
      Effect.map((rows) => rows.map(toRecord)),
      storageError("SqlDeploymentStore.listFollowing")
    )

  const liveOfBuild = (publisherId: Ids.AccountId, agentName: Ids.AgentName, buildId: Ids.BuildId) =>
    sql<DeploymentRow>`${select} WHERE d.publisher_id = ${publisherId} AND d.agent_name = ${agentName}
        AND d.build_id = ${buildId} AND d.undeployed_at IS NULL ORDER BY d.deployed_at, d.id`.pipe(
      Effect.map((rows) => rows.map(toRecord)),
      storageError("SqlDeploymentStore.liveOfBuild")
    )

  const updateSettings: Ports.DeploymentStore["Type"]["updateSettings"] = (id, settings) =>
    sql`UPDATE deployments SET concurrent_send = ${settings.concurrent_send} WHERE id = ${id}`.pipe(
      Effect.asVoid,
      storageError("SqlDeploymentStore.updateSettings")
    )

  // RETURNING works on both dialects (SQLite since 3.35): the row says whether this write won.
  const setStatus: Ports.DeploymentStore["Type"]["setStatus"] = (id, from, to) =>
    sql<{ id: string }>`UPDATE deployments SET status = ${to.status}, status_reason = ${to.status_reason ?? null},
        status_message = ${to.status_message ?? null}
      WHERE id = ${id} AND status = ${from} AND undeployed_at IS NULL RETURNING id`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlDeploymentStore.setStatus")
    )

  // Every id is longer than "": no `after` starts at the first.
  const listLiveWithStatus: Ports.DeploymentStore["Type"]["listLiveWithStatus"] = (statuses, after, limit) =>
    statuses.length === 0
      ? Effect.succeed([])
      : liveWithStatusStatement(sql, statuses, after, limit).pipe(
          Effect.map((rows) => rows.map(toRecord)),
          storageError("SqlDeploymentStore.listLiveWithStatus")
        )

  const accountsDeploying = (publisherId: Ids.AccountId, agentName: Ids.AgentName) =>
    accountsDeployingStatement(sql, publisherId, agentName).pipe(
      Effect.map((rows) => rows.map((row) => Ids.AccountId.make(row.account_id, trusted))),
      storageError("SqlDeploymentStore.accountsDeploying")
    )

  return Ports.DeploymentStore.of({
    upsert,
    findById,
    findByNamespace,
    liveInNamespace,
    listForAgent,
    listForAccount,
    liveOfAccounts,
    markUndeployed,
    setStatus,
    listLiveWithStatus,
    updateSettings,
    listFollowing,
    liveOfBuild,
    accountsDeploying
  })
})

export const layer = Layer.effect(Ports.DeploymentStore, make)
