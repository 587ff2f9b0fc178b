/**
 * The schema, as ordered migrations shared by every SQL dialect. Times are
 * stored as ISO 8601 UTC text (sortable in both dialects); JSON as text.
 */
import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as SqlA2aTaskStore from "./SqlA2aTaskStore.js"
import { traceQueries } from "./TraceMigrations.js"

/** A primary key that only grows, in the dialect's words. */
const growingKey = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({
    pg: () => sql.literal("BIGSERIAL PRIMARY KEY"),
    orElse: () => sql.literal("INTEGER PRIMARY KEY AUTOINCREMENT")
  })

const init = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const eventId = growingKey(sql)
  yield* sql`CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id),
    expires_at TEXT,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX tokens_user ON tokens (user_id)`
  yield* sql`CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE memberships (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    PRIMARY KEY (account_id, user_id)
  )`
  yield* sql`CREATE INDEX memberships_user ON memberships (user_id)`
  yield* sql`CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    registry TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (account_id, name)
  )`
  yield* sql`CREATE TABLE builds (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    build_id TEXT NOT NULL,
    spec TEXT NOT NULL,
    spec_content TEXT NOT NULL,
    readme TEXT NOT NULL,
    validation_warnings TEXT NOT NULL,
    version TEXT,
    published_at TEXT,
    registered_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, build_id),
    UNIQUE (agent_id, version)
  )`
  yield* sql`CREATE INDEX builds_published ON builds (published_at) WHERE version IS NOT NULL`
  yield* sql`CREATE TABLE events (
    id ${eventId},
    account_id TEXT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX events_account ON events (account_id, id)`
})

const deploymentsAndRetention = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE deployments (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    publisher_id TEXT NOT NULL REFERENCES accounts(id),
    agent_name TEXT NOT NULL,
    build_id TEXT NOT NULL,
    namespace TEXT NOT NULL,
    status TEXT NOT NULL,
    deployed_at TEXT NOT NULL,
    undeployed_at TEXT,
    spec TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX deployments_agent ON deployments (publisher_id, agent_name)`
  yield* sql`CREATE INDEX deployments_account ON deployments (account_id, deployed_at)`
  // The highest event id that retention has deleted: a client resuming from
  // an older id may have missed events and must resync.
  yield* sql`CREATE TABLE event_log_state (id INTEGER PRIMARY KEY, pruned BIGINT NOT NULL)`
  yield* sql`INSERT INTO event_log_state (id, pruned) VALUES (1, 0)`
})

const conversations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const seq = growingKey(sql)
  yield* sql`CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    deployment_id TEXT NOT NULL,
    owner_id TEXT NOT NULL REFERENCES users(id),
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    user_messages INTEGER NOT NULL DEFAULT 0,
    terminal INTEGER NOT NULL DEFAULT 0
  )`
  yield* sql`CREATE INDEX conversations_owner ON conversations (deployment_id, owner_id, updated_at)`
  yield* sql`CREATE TABLE messages (
    seq ${seq},
    id TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations(id),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    attachments TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete', 'streaming', 'failed', 'cancelled')),
    client_message_id TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (conversation_id, client_message_id)
  )`
  yield* sql`CREATE INDEX messages_conversation ON messages (conversation_id, seq)`
  yield* sql`CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming'`
  yield* sql`CREATE TABLE files (
    deployment_id TEXT NOT NULL,
    key TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size BIGINT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'ready')),
    origin TEXT NOT NULL CHECK (origin IN ('user', 'agent')),
    conversation_id TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (deployment_id, key)
  )`
  yield* sql`CREATE INDEX files_owner ON files (deployment_id, owner_id)`
})

const traces = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE traces (
    publisher_id TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    latency_ms DOUBLE PRECISION NOT NULL,
    input TEXT NOT NULL,
    output TEXT NOT NULL,
    started_at TEXT NOT NULL,
    PRIMARY KEY (publisher_id, agent_name, trace_id)
  )`
  // Serves the listing: one agent's traces in a time window, newest first.
  yield* sql`CREATE INDEX traces_agent_time ON traces (publisher_id, agent_name, started_at)`
})

const replyLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The process receiving a streaming reply renews its lease; another process
  // closes the reply only once the lease has ended.
  yield* sql`ALTER TABLE messages ADD COLUMN lease_owner TEXT`
  yield* sql`ALTER TABLE messages ADD COLUMN lease_expires_at TEXT`
})

const deviceCodes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE device_codes (
    device_hash TEXT PRIMARY KEY,
    user_code TEXT NOT NULL UNIQUE,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
    user_id TEXT REFERENCES users(id),
    poll_interval INTEGER NOT NULL,
    last_polled_at TEXT,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX device_codes_expiry ON device_codes (expires_at)`
})

const pendingFiles = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The sweep of expired reservations reads pending files by age; ready ones, the many, stay out of the index.
  yield* sql`CREATE INDEX files_pending ON files (created_at) WHERE status = 'pending'`
})

const traceOwners = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The trace of a chat turn holds the conversation's text: only its owner may read it (null: every member).
  yield* sql`ALTER TABLE traces ADD COLUMN owner_id TEXT`
  // Older turns did not record whose conversation they were: they are hidden from everyone ('' is no user's id).
  yield* sql`UPDATE traces SET owner_id = '' WHERE name = 'chat'`
})

const tokenParents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A session signed in with a token, and the token of a device login approved in a session, are made from
  // that credential: the database removes them with it (revocation is transitive) and refuses them without it.
  yield* sql`ALTER TABLE tokens ADD COLUMN parent_hash TEXT REFERENCES tokens(hash) ON DELETE CASCADE`
  yield* sql`CREATE INDEX tokens_parent ON tokens (parent_hash) WHERE parent_hash IS NOT NULL`
  yield* sql`ALTER TABLE device_codes ADD COLUMN decided_by TEXT REFERENCES tokens(hash) ON DELETE CASCADE`
  yield* sql`CREATE INDEX device_codes_decided_by ON device_codes (decided_by) WHERE decided_by IS NOT NULL`
})

const accessTokens = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A personal access token has an id users know it by, a name, and optional limits: its scopes and its
  // accounts, each a space-separated list (NULL: every scope, every account of its user).
  yield* sql`ALTER TABLE tokens ADD COLUMN id TEXT`
  yield* sql`ALTER TABLE tokens ADD COLUMN name TEXT`
  yield* sql`ALTER TABLE tokens ADD COLUMN scopes TEXT`
  yield* sql`ALTER TABLE tokens ADD COLUMN accounts TEXT`
  yield* sql`ALTER TABLE tokens ADD COLUMN last_used_at TEXT`
  yield* sql`CREATE UNIQUE INDEX tokens_id ON tokens (id) WHERE id IS NOT NULL`
  // The first user, made with the setup code, administers the instance.
  yield* sql`ALTER TABLE users ADD COLUMN instance_admin INTEGER NOT NULL DEFAULT 0`
  // One row per process that started without users; setting up spends them all.
  yield* sql`CREATE TABLE setup_codes (hash TEXT PRIMARY KEY, created_at TEXT NOT NULL)`
  // Invitations waiting for their invitee; taking one removes it.
  yield* sql`CREATE TABLE invitations (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    code_hash TEXT NOT NULL UNIQUE,
    email TEXT,
    role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX invitations_account ON invitations (account_id, created_at)`
  // Each account's audit log, read newest first by the index.
  yield* sql`CREATE TABLE audit_log (
    id ${growingKey(sql)},
    account_id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    details TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX audit_log_account ON audit_log (account_id, id)`
  // Who a user is at an OpenID provider: signing in there again finds the same user.
  yield* sql`CREATE TABLE user_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL REFERENCES users(id),
    email TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
  )`
})

/** Issue 28: a deployment made by a rollback names the deployment it rolled back. */
const deploymentRollbacks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE deployments ADD COLUMN rolled_back_from TEXT`
})

/**
 * Issue 28: yanked versions (a reason and a time on the build), channels
 * (named pointers to a published version), and deployments that follow a
 * range or a channel (kept as JSON) with the deployment they rolled forward from.
 */
const releases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE builds ADD COLUMN yanked_at TEXT`
  yield* sql`ALTER TABLE builds ADD COLUMN yank_reason TEXT`
  yield* sql`CREATE TABLE channels (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, name)
  )`
  yield* sql`ALTER TABLE deployments ADD COLUMN follow TEXT`
  yield* sql`ALTER TABLE deployments ADD COLUMN rolled_forward_from TEXT`
  // Publishing and moving a channel look for the live deployments of the agent that follow something.
  yield* sql`CREATE INDEX deployments_following ON deployments (publisher_id, agent_name) WHERE follow IS NOT NULL AND undeployed_at IS NULL`
})

/**
 * Issue 28: a deployment's settings; for now its strategy for a send while a
 * reply streams (null: the default, `interrupt`).
 */
const deploymentSettings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE deployments ADD COLUMN concurrent_send TEXT
    CHECK (concurrent_send IN ('reject', 'queue', 'interrupt'))`
})

/**
 * Issue 28: the secrets of an account (written and deleted by its owners and
 * admins, never read back by an API), and the env a deploy set over the spec's
 * (JSON: plain values and secret references, never a secret's value).
 */
const accountSecrets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE account_secrets (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (account_id, name)
  )`
  yield* sql`ALTER TABLE deployments ADD COLUMN env TEXT`
})

/**
 * Issue 28: a live deployment's status follows its workload's rollout
 * (pending, progressing, available, failed) with the cluster's reason and
 * message. Live records said `running`: they become `pending`, so that the
 * platform reads their rollout again.
 */
const rolloutStatus = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE deployments ADD COLUMN status_reason TEXT`
  yield* sql`ALTER TABLE deployments ADD COLUMN status_message TEXT`
  yield* sql`UPDATE deployments SET status = 'pending' WHERE status = 'running' AND undeployed_at IS NULL`
  // The poll of rollouts walks the live deployments that have not settled, by id.
  yield* sql`CREATE INDEX deployments_unsettled ON deployments (id) WHERE undeployed_at IS NULL AND status IN ('pending', 'progressing')`
})

/**
 * An agent's deployment history is read most recent first: with the time
 * and id in the agent's index, the rows come in that order from the index,
 * and the database no longer sorts them for each read (SQLite sorted them
 * in a temporary tree). The new index begins with the old one's columns, so
 * it serves every lookup that one did, and replaces it.
 */
const deploymentHistoryOrder = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX deployments_agent_history ON deployments (publisher_id, agent_name, deployed_at, id)`
  yield* sql`DROP INDEX deployments_agent`
})

/**
 * A conversation's streaming replies are counted by its id (the list and a
 * conversation's read count them for each conversation). The index of
 * streaming replies was keyed by the status alone, which every entry shares:
 * SQLite, without statistics, chose it and read every streaming reply of
 * the server for each conversation (1.3 ms for a list of 20 while 1,000
 * replies streamed elsewhere, against 40 µs). Keyed by the conversation, it
 * still holds the streaming replies only, and still serves the statements
 * that read all of them (lease renewals, closing a process's replies).
 */
const streamingByConversation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX messages_streaming_conversation ON messages (conversation_id) WHERE status = 'streaming'`
  yield* sql`DROP INDEX messages_streaming`
})

/**
 * A namespace's deployments are read on every deploy (inside its write
 * transaction), undeploy and restart of a workload: the namespace had no
 * index, and SQLite read every deployment ever made and sorted the
 * namespace's (870 µs at 10,000 deployments, against 23 µs). With the time
 * and id in the index, the newest comes first without a sort.
 */
const deploymentsByNamespace = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX deployments_namespace ON deployments (namespace, deployed_at, id)`
})

/**
 * An agent's row keeps the time of its newest publication (NULL until its
 * first), kept by the store as versions are published, so that the catalog
 * reads its page and total from one index of published agents, newest
 * first, rather than grouping every published version of the server
 * (`SqlAgentStore.catalogStatements`).
 */
const catalogOnAgents = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE agents ADD COLUMN last_published_at TEXT`
  yield* sql`UPDATE agents SET last_published_at = (SELECT MAX(b.published_at) FROM builds b
    WHERE b.agent_id = agents.id AND b.version IS NOT NULL)`
  yield* sql`CREATE INDEX agents_catalog ON agents (last_published_at DESC, id) WHERE last_published_at IS NOT NULL`
})

/**
 * The accounts that run an agent are read on every build event (a
 * registration, a publication, a yank), and the live deployments of a
 * build on every yank. The agent's index holds its whole history: for an
 * agent that many accounts deploy again and again, Postgres read every
 * deployment of the server instead (7.5 ms at 23,000 deployments, 21,000 of
 * them that agent's, against 0.8 ms). The live ones alone, by agent and
 * account, are what both ask for.
 */
const liveDeploymentsByAgent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX deployments_agent_live ON deployments (publisher_id, agent_name, account_id) WHERE undeployed_at IS NULL`
})

/**
 * The traces a reader may see: of each of its accounts, those without an
 * owner and those of its own chats. An agent's traces page reads each such
 * key's newest traces from one of these two indexes and merges them; the
 * count searches both on Postgres. The traces without an owner have an
 * index of their own, so that a key is an equality on every column before
 * the time on both dialects (an `IS NULL` column would leave Postgres
 * unable to read the time in order). Before, every page read the agent's
 * traces by time and dropped the hidden ones: for an agent of 9,000 traces
 * with 545 visible, 5.1 ms on Postgres and 2.3 on SQLite; and for one whose
 * traces were all visible, Postgres read and sorted all of them (15.5 ms).
 */
const visibleTraces = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX traces_unowned ON traces (publisher_id, agent_name, account_id, started_at, trace_id) WHERE owner_id IS NULL`
  yield* sql`CREATE INDEX traces_owned ON traces (publisher_id, agent_name, account_id, owner_id, started_at, trace_id)
    WHERE owner_id IS NOT NULL`
})

/**
 * A page of the live deployments of the caller's accounts (MCP's
 * `resources/list`) reads each account's live ones in id order, from this
 * index, and merges them (`SqlDeploymentStore.liveOfAccountsStatement`).
 */
const liveDeploymentsByAccount = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX deployments_account_live ON deployments (account_id, id) WHERE undeployed_at IS NULL`
})

/**
 * The live deployments of a namespace, read on every deploy (inside its
 * write transaction), undeploy and restart. The namespace's index holds its
 * whole history: for a namespace deployed again and again, both dialects
 * read every deployment it ever had to find the live one (10,000: 2.8 ms on
 * Postgres and 1.8 on SQLite, against 0.04 and 0.06; docs/performance.md,
 * "A traces count key by key, and a namespace's live deployments").
 */
const liveDeploymentsByNamespace = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX deployments_namespace_live ON deployments (namespace, deployed_at, id) WHERE undeployed_at IS NULL`
})

/**
 * Every span of a trace an agent exports (the trace row stays the one of
 * the listing): ids, parent, name, kind, status, times, and attributes and
 * events as JSON text. Keyed by the agent and the trace, so that a trace's
 * spans are one range of the key.
 */
const traceSpans = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE trace_spans (
    publisher_id TEXT NOT NULL,
    agent_name TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    span_id TEXT NOT NULL,
    parent_span_id TEXT,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('unset', 'ok', 'error')),
    status_message TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL,
    attributes TEXT NOT NULL,
    events TEXT NOT NULL,
    PRIMARY KEY (publisher_id, agent_name, trace_id, span_id)
  )`
})

/** Every migration, keyed `<number>_<name>`. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_init": init,
  "0002_deployments_and_retention": deploymentsAndRetention,
  "0003_conversations": conversations,
  "0004_traces": traces,
  "0005_reply_leases": replyLeases,
  "0006_device_codes": deviceCodes,
  "0007_pending_files": pendingFiles,
  "0008_trace_owners": traceOwners,
  "0009_token_parents": tokenParents,
  "0010_access_tokens": accessTokens,
  "0011_deployment_rollbacks": deploymentRollbacks,
  "0012_releases": releases,
  "0013_deployment_settings": deploymentSettings,
  "0014_account_secrets": accountSecrets,
  "0015_rollout_status": rolloutStatus,
  "0016_trace_spans": traceSpans,
  "0017_trace_queries": traceQueries,
  "0018_a2a_tasks": SqlA2aTaskStore.migration,
  "0019_deployment_history_order": deploymentHistoryOrder,
  "0020_streaming_by_conversation": streamingByConversation,
  "0021_deployments_by_namespace": deploymentsByNamespace,
  "0022_catalog_on_agents": catalogOnAgents,
  "0023_live_deployments_by_agent": liveDeploymentsByAgent,
  "0024_visible_traces": visibleTraces,
  "0025_live_deployments_by_account": liveDeploymentsByAccount,
  "0026_live_deployments_by_namespace": liveDeploymentsByNamespace
}

const table = "hosting_migrations"

const migrate = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })

/** The advisory lock key that lets one process at a time migrate a Postgres database. */
const migrationLock = 7_310_000

/**
 * On Postgres, the migrator alone is not safe for processes that start
 * together: each finds no migrations table and creates it, and all but one
 * fail. One transaction holding a lock of its own runs the whole migrator,
 * so the others wait, then find the schema current. The lock ends with the
 * transaction (or with the connection of a process that dies). Inside a
 * transaction the migrator's own probe for its table (a failing cast) would
 * abort it, so the table is made first, as the migrator would make it.
 */
const oneAtATime = <A, E, R>(run: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.onDialectOrElse({
      pg: () =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`SELECT pg_advisory_xact_lock(${migrationLock})`
          yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
            migration_id integer primary key,
            created_at timestamp with time zone not null default now(),
            name text not null
          )`
          return yield* run
        })),
      // One process owns a SQLite file (SqliteStorage locks it), so there is no one to wait for.
      orElse: () => run
    }))

/** Runs the pending migrations in order; safe to run at every start, also by processes that start together. */
export const run = oneAtATime(migrate)

/** The newest migration applied to the database in context (none on a database never migrated). */
export const current = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ migration_id: number | string; name: string }>`SELECT migration_id, name FROM ${sql(table)}
    ORDER BY migration_id DESC LIMIT 1`.pipe(
    Effect.map((rows) => rows[0] === undefined ? undefined : { id: Number(rows[0].migration_id), name: rows[0].name })
  ))

/** How many migrations this build knows. */
export const known = Object.keys(migrations).length
