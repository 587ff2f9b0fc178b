/**
 * AgentStore on @effect/sql: agents and their builds.
 */
import { SqlClient } from "@effect/sql"
import { Agent, Ids, Ports, Trusted } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText, trusted } from "./internal/sql.js"

interface AgentRow {
  readonly id: string
  readonly account_id: string
  readonly account: string
  readonly name: string
  readonly registry: string
  readonly created_at: string
  readonly updated_at: string
}

interface BuildRow {
  readonly agent_id: string
  readonly build_id: string
  readonly spec: string
  readonly spec_content: string
  readonly readme: string
  readonly validation_warnings: string
  readonly version: string | null
  readonly published_at: string | null
  readonly registered_at: string
  readonly updated_at: string
  readonly yanked_at: string | null
  readonly yank_reason: string | null
}

interface ChannelRow {
  readonly agent_id: string
  readonly name: string
  readonly version: string
  readonly updated_at: string
}

const toAgent = (row: AgentRow) =>
  Trusted.make(Agent.AgentRecord, {
    id: Ids.AgentId.make(row.id),
    account_id: Ids.AccountId.make(row.account_id),
    account: Ids.AccountName.make(row.account),
    name: Ids.AgentName.make(row.name),
    registry: row.registry,
    created_at: timeOf(row.created_at),
    updated_at: timeOf(row.updated_at)
  })

const yankOf = (yankedAt: string, reason: string | null) =>
  Trusted.make(Agent.Yank, { reason: reason ?? "", yanked_at: timeOf(yankedAt) })

const toBuild = (row: BuildRow) =>
  Trusted.make(Agent.Build, {
    agent_id: Ids.AgentId.make(row.agent_id),
    build_id: Ids.BuildId.make(row.build_id),
    spec: JSON.parse(row.spec),
    spec_content: row.spec_content,
    readme: row.readme,
    validation_warnings: (JSON.parse(row.validation_warnings) as Array<Agent.ValidationWarning>).map((w) =>
      Trusted.make(Agent.ValidationWarning, w)
    ),
    version: Option.map(Option.fromNullable(row.version), Ids.SemVer.make),
    published_at: Option.map(Option.fromNullable(row.published_at), timeOf),
    registered_at: timeOf(row.registered_at),
    updated_at: timeOf(row.updated_at),
    ...(row.yanked_at === null ? {} : { yanked: yankOf(row.yanked_at, row.yank_reason) })
  })

/** A published version as a catalog page reads it. */
interface CatalogVersionRow {
  readonly agent_id: string
  readonly build_id: string
  readonly version: string
  readonly yanked_at: string | null
  readonly yank_reason: string | null
  /** The spec's JSON text. */
  readonly spec: string
}

const catalogVersionOf = (row: CatalogVersionRow) => ({
  build_id: Ids.BuildId.make(row.build_id, trusted),
  version: Option.some(Ids.SemVer.make(row.version, trusted)),
  yanked: row.yanked_at === null ? undefined : yankOf(row.yanked_at, row.yank_reason),
  spec: row.spec
})

/** Escapes LIKE wildcards so that a search for `a_b` matches only `a_b`. */
const likePattern = (q: string) => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** An agent's columns, with its account's name, from `agents ag JOIN accounts ac`. */
const agentColumnsOf = (sql: SqlClient.SqlClient) =>
  sql.literal("ag.id, ag.account_id, ac.name AS account, ag.name, ag.registry, ag.created_at, ag.updated_at")

/**
 * The statements of a catalog page and of its total (exported for the test
 * of their plans). An agent's row keeps the time of its newest publication
 * (migration 0022; NULL until a first one), so both are ranges of one
 * partial index of published agents, newest first: grouping every published
 * version of the server by agent, the page and its total took 13.5 ms at
 * 1,000 agents of 10 versions on SQLite, against 0.1 ms. The page's
 * versions are read after it, for its agents alone.
 */
export const catalogStatements = (sql: SqlClient.SqlClient, query: Ports.CatalogQuery) => {
  const filter = Option.match(query.q, {
    onNone: () => sql.literal(""),
    onSome: (q) => sql`AND LOWER(ac.name || '/' || ag.name) LIKE ${likePattern(q)} ESCAPE '\\'`
  })
  return {
    // Without a search the accounts are not needed: every agent has its account (a foreign key).
    count: Option.isNone(query.q)
      ? sql<{ total: number | string }>`SELECT COUNT(*) AS total FROM agents ag WHERE ag.last_published_at IS NOT NULL`
      : sql<{ total: number | string }>`SELECT COUNT(*) AS total
        FROM agents ag JOIN accounts ac ON ac.id = ag.account_id
        WHERE ag.last_published_at IS NOT NULL ${filter}`,
    page: sql<AgentRow & { last_published_at: string }>`SELECT ${agentColumnsOf(sql)}, ag.last_published_at
      FROM agents ag JOIN accounts ac ON ac.id = ag.account_id
      WHERE ag.last_published_at IS NOT NULL ${filter}
      ORDER BY ag.last_published_at DESC, ag.id
      LIMIT ${query.limit} OFFSET ${query.offset}`
  }
}

/**
 * Moves an agent's newest publication to `publishedAt` when it is newer:
 * idempotent, and right under concurrent publications (the database applies
 * it to the row as the other left it, where a count read again from the
 * builds could miss the other's uncommitted version).
 */
const publishedAgent = (sql: SqlClient.SqlClient, agentId: string, publishedAt: string) =>
  sql`UPDATE agents SET last_published_at = CASE
      WHEN last_published_at IS NULL OR last_published_at < ${publishedAt} THEN ${publishedAt} ELSE last_published_at END
    WHERE id = ${agentId}`

export const make: Effect.Effect<Ports.AgentStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const agentColumns = agentColumnsOf(sql)
  const buildColumns = sql.literal(
    "agent_id, build_id, spec, spec_content, readme, validation_warnings, version, published_at, registered_at, updated_at, " +
      "yanked_at, yank_reason"
  )

  const findAgent = (accountId: Ids.AccountId, name: Ids.AgentName) =>
    sql<AgentRow>`SELECT ${agentColumns} FROM agents ag JOIN accounts ac ON ac.id = ag.account_id
      WHERE ag.account_id = ${accountId} AND ag.name = ${name}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toAgent)),
      storageError("SqlAgentStore.findAgent")
    )

  const upsertAgent: Ports.AgentStore["Type"]["upsertAgent"] = Effect.fnUntraced(
    function*(input: Parameters<Ports.AgentStore["Type"]["upsertAgent"]>[0]) {
      const now = timeText(input.now)
      yield* sql`INSERT INTO agents (id, account_id, name, registry, created_at, updated_at)
        VALUES (${input.id}, ${input.account_id}, ${input.name}, ${input.registry}, ${now}, ${now})
        ON CONFLICT (account_id, name) DO UPDATE SET registry = excluded.registry, updated_at = excluded.updated_at`
      const rows = yield* sql<AgentRow>`SELECT ${agentColumns} FROM agents ag JOIN accounts ac ON ac.id = ag.account_id
        WHERE ag.account_id = ${input.account_id} AND ag.name = ${input.name}`
      return toAgent(rows[0]!)
    },
    storageError("SqlAgentStore.upsertAgent")
  )

  const findBuild = (agentId: Ids.AgentId, buildId: Ids.BuildId) =>
    sql<BuildRow>`SELECT ${buildColumns} FROM builds WHERE agent_id = ${agentId} AND build_id = ${buildId}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toBuild)),
      storageError("SqlAgentStore.findBuild")
    )

  const findBuildByVersion = (agentId: Ids.AgentId, version: Ids.SemVer) =>
    sql<BuildRow>`SELECT ${buildColumns} FROM builds WHERE agent_id = ${agentId} AND version = ${version}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toBuild)),
      storageError("SqlAgentStore.findBuildByVersion")
    )

  const insertBuild = (build: Agent.Build) =>
    sql`INSERT INTO builds (agent_id, build_id, spec, spec_content, readme, validation_warnings, version, published_at, registered_at, updated_at)
      VALUES (${build.agent_id}, ${build.build_id}, ${JSON.stringify(build.spec)}, ${build.spec_content}, ${build.readme},
        ${JSON.stringify(build.validation_warnings)}, ${Option.getOrNull(build.version)},
        ${Option.getOrNull(Option.map(build.published_at, timeText))}, ${timeText(build.registered_at)}, ${timeText(build.updated_at)})
      ON CONFLICT (agent_id, build_id) DO UPDATE SET spec = excluded.spec, spec_content = excluded.spec_content,
        readme = excluded.readme, validation_warnings = excluded.validation_warnings, updated_at = excluded.updated_at`

  // A build given with its publication (kept by an update, or new with one) keeps its agent's newest publication right.
  const upsertBuild = (build: Agent.Build) =>
    Option.match(Option.all([build.version, build.published_at]), {
      onNone: () => insertBuild(build),
      onSome: ([, publishedAt]) => Effect.zipRight(insertBuild(build), publishedAgent(sql, build.agent_id, timeText(publishedAt)))
    }).pipe(
      Effect.as(build),
      storageError("SqlAgentStore.upsertBuild")
    )

  const publishBuild: Ports.AgentStore["Type"]["publishBuild"] = (input) =>
    Effect.zipRight(
      sql`UPDATE builds SET version = ${input.version}, published_at = ${timeText(input.now)}, updated_at = ${timeText(input.now)}
        WHERE agent_id = ${input.agent_id} AND build_id = ${input.build_id}`,
      publishedAgent(sql, input.agent_id, timeText(input.now))
    ).pipe(
      Effect.asVoid,
      storageError("SqlAgentStore.publishBuild")
    )

  const yankBuild: Ports.AgentStore["Type"]["yankBuild"] = (input) =>
    sql`UPDATE builds SET yanked_at = ${Option.isSome(input.reason) ? timeText(input.now) : null},
        yank_reason = ${Option.getOrNull(input.reason)}, updated_at = ${timeText(input.now)}
      WHERE agent_id = ${input.agent_id} AND build_id = ${input.build_id}`.pipe(
      Effect.asVoid,
      storageError("SqlAgentStore.yankBuild")
    )

  const listChannels = (agentId: Ids.AgentId) =>
    sql<ChannelRow>`SELECT agent_id, name, version, updated_at FROM channels WHERE agent_id = ${agentId} ORDER BY name`.pipe(
      Effect.map((rows) =>
        rows.map((row): Agent.ChannelRecord => ({
          agent_id: Ids.AgentId.make(row.agent_id, trusted),
          name: Ids.ChannelName.make(row.name, trusted),
          version: Ids.SemVer.make(row.version, trusted),
          updated_at: timeOf(row.updated_at)
        }))
      ),
      storageError("SqlAgentStore.listChannels")
    )

  const setChannel = (channel: Agent.ChannelRecord) =>
    sql`INSERT INTO channels (agent_id, name, version, updated_at)
      VALUES (${channel.agent_id}, ${channel.name}, ${channel.version}, ${timeText(channel.updated_at)})
      ON CONFLICT (agent_id, name) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`.pipe(
      Effect.asVoid,
      storageError("SqlAgentStore.setChannel")
    )

  const removeChannel = (agentId: Ids.AgentId, name: Ids.ChannelName) =>
    sql<{ name: string }>`DELETE FROM channels WHERE agent_id = ${agentId} AND name = ${name} RETURNING name`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlAgentStore.removeChannel")
    )

  const listBuilds = (agentId: Ids.AgentId) =>
    sql<BuildRow>`SELECT ${buildColumns} FROM builds WHERE agent_id = ${agentId}
      ORDER BY registered_at DESC, build_id DESC`.pipe(
      Effect.map((rows) => rows.map(toBuild)),
      storageError("SqlAgentStore.listBuilds")
    )

  const listPublished = Effect.fnUntraced(function*(query: Ports.CatalogQuery) {
    const { count: counted, page: paged } = catalogStatements(sql, query)
    const [count] = yield* counted
    const page = yield* paged
    // What the choice of the latest reads, and the spec, read as JSON for the latest alone (a page's agents may
    // have hundreds of versions, each with its readme and spec's text, which the page does not show).
    const published = page.length === 0 ? [] : yield* sql<CatalogVersionRow>`SELECT agent_id, build_id, version, yanked_at, yank_reason,
        spec FROM builds WHERE version IS NOT NULL AND ${sql.in("agent_id", page.map((row) => row.id))}`
    const byAgent = new Map<string, Array<ReturnType<typeof catalogVersionOf>>>()
    for (const row of published) {
      const versions = byAgent.get(row.agent_id)
      if (versions === undefined) byAgent.set(row.agent_id, [catalogVersionOf(row)])
      else versions.push(catalogVersionOf(row))
    }
    const agents = page.map((row) => {
      // An agent's row has a publication time only once one of its builds has a version.
      const versions = Agent.publishedOf(byAgent.get(row.id)!)
      // The newest version that is not yanked; when every one is, the newest (the agent stays listed, its versions marked).
      const latest = Agent.installableOf(versions)[0] ?? versions[0]!
      const description = (JSON.parse(latest.spec) as Record<string, unknown>)["description"]
      return Trusted.make(Agent.AgentSummary, {
        account: Ids.AccountName.make(row.account),
        name: Ids.AgentName.make(row.name),
        registry: row.registry,
        description: typeof description === "string" ? description : undefined,
        latest_version: Option.getOrThrow(latest.version),
        latest_build_id: latest.build_id,
        published_at: timeOf(row.last_published_at),
        versions_count: versions.length
      })
    })
    return { agents, total: Number(count?.total ?? 0) }
  }, storageError("SqlAgentStore.listPublished"))

  return Ports.AgentStore.of({
    findAgent,
    upsertAgent,
    findBuild,
    findBuildByVersion,
    upsertBuild,
    publishBuild,
    yankBuild,
    listChannels,
    setChannel,
    removeChannel,
    listBuilds,
    listPublished
  })
})

export const layer = Layer.effect(Ports.AgentStore, make)
