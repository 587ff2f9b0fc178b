/**
 * Seed data for development and black-box tests (extensions.md, "Fixtures
 * file"). Loading is idempotent: loading the same fixtures twice changes
 * nothing. Unknown keys are refused with a message that names them.
 */
import { DateTime, Effect, Option, Schema, Stream } from "effect"
import { Account, Deployment, Errors, File, Files, Identity, Ids, ObjectStore, Ports, SchemaIssues, Trace, Tracing } from "@hosting/core"

const FixtureUser = Schema.Struct({
  id: Ids.UserId,
  name: Schema.String,
  tokens: Schema.optionalWith(Schema.Array(Schema.NonEmptyString), { default: () => [] })
})

const FixtureAccount = Schema.Struct({
  name: Ids.AccountName,
  members: Schema.optionalWith(Schema.Array(Schema.Struct({ user: Ids.UserId, role: Ids.Role })), { default: () => [] })
})

const AgentRef = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\/[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, {
    message: () => "must be <account>/<agent>"
  })
)

const FixtureDeployment = Schema.Struct({
  id: Deployment.DeploymentId,
  account: Ids.AccountName,
  agent: AgentRef,
  build_id: Ids.BuildId,
  namespace: Schema.NonEmptyString,
  status: Schema.String,
  deployed_at: Schema.DateTimeUtc,
  undeployed_at: Schema.optional(Schema.NullOr(Schema.DateTimeUtc)),
  spec: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

const FixtureCluster = Schema.Struct({
  configmaps: Schema.optional(Schema.Array(Schema.Struct({
    namespace: Schema.NonEmptyString,
    name: Schema.NonEmptyString,
    data: Schema.Record({ key: Schema.String, value: Schema.String })
  }))),
  pods: Schema.optional(Schema.Array(Schema.Struct({
    namespace: Schema.NonEmptyString,
    name: Schema.NonEmptyString
  })))
})

const FixtureFile = Schema.Struct({
  deployment: Schema.NonEmptyString,
  owner: Ids.UserId,
  key: Schema.NonEmptyString,
  filename: Schema.NonEmptyString,
  content_type: Schema.String,
  content: Schema.String,
  status: Schema.Literal("pending", "ready")
})

const FixtureTrace = Schema.Struct({
  agent: AgentRef,
  trace_id: Schema.NonEmptyString,
  name: Schema.String,
  status: Schema.Literal("ok", "error"),
  latency_ms: Schema.Number,
  input: Schema.String,
  output: Schema.String,
  timestamp: Schema.DateTimeUtc
})

/** The whole fixtures format of extensions.md; every key is optional. */
export const FixturesSchema = Schema.Struct({
  users: Schema.optional(Schema.Array(FixtureUser)),
  accounts: Schema.optional(Schema.Array(FixtureAccount)),
  deployments: Schema.optional(Schema.Array(FixtureDeployment)),
  cluster: Schema.optional(FixtureCluster),
  files: Schema.optional(Schema.Array(FixtureFile)),
  traces: Schema.optional(Schema.Array(FixtureTrace))
})
export type Fixtures = typeof FixturesSchema.Type

/** Decodes fixtures from parsed JSON; unknown keys and bad values are refused with their path. */
export const decode = (input: unknown): Effect.Effect<Fixtures, Errors.InvalidRequest> =>
  Schema.decodeUnknown(FixturesSchema, { onExcessProperty: "error", errors: "all" })(input).pipe(
    Effect.mapError((error) =>
      new Errors.InvalidRequest({ details: `fixtures: ${SchemaIssues.formatParseError(error, "fixtures")}` })
    )
  )

/** Decodes fixtures from JSON text. */
export const parse = (text: string): Effect.Effect<Fixtures, Errors.InvalidRequest> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new Errors.InvalidRequest({ details: `fixtures: not JSON: ${(error as Error).message}` })
  }).pipe(Effect.flatMap(decode))

/** What a load did, for the log. */
export interface LoadReport {
  readonly users: number
  readonly accounts: number
  readonly deployments: number
  readonly files: number
  readonly traces: number
}

const encoder = new TextEncoder()

/**
 * Loads the fixtures. References are checked first, then the bytes of ready
 * files go to the object store, then every record is written in one
 * transaction: a fixtures file with a bad reference stores nothing.
 */
export const load = Tracing.fn("Fixtures.load")(function*(fixtures: Fixtures) {
  const store = yield* Ports.AccountStore
  const identity = yield* Identity.Identity
  const ids = yield* Ports.IdGenerator
  const tx = yield* Ports.Transactor
  const deploymentStore = yield* Ports.DeploymentStore
  const fileStore = yield* Ports.FileStore
  const traceStore = yield* Ports.TraceStore
  const objects = yield* ObjectStore.ObjectStore
  const users = fixtures.users ?? []
  const accounts = fixtures.accounts ?? []
  const deployments = fixtures.deployments ?? []
  const files = fixtures.files ?? []
  const traces = fixtures.traces ?? []
  const known = new Set(users.map((u) => u.id))
  const knownAccounts = new Set<string>(accounts.map((a) => a.name))
  const knownDeployments = new Set<string>(deployments.map((d) => d.id))
  const refused = (details: string) => new Errors.InvalidRequest({ details: `fixtures: ${details}` })
  const userExists = (id: Ids.UserId) =>
    known.has(id) ? Effect.succeed(true) : Effect.map(store.findUser(id), Option.isSome)
  const accountIdOf = (name: string, what: string) =>
    store.findByName(Ids.AccountName.make(name)).pipe(
      Effect.flatMap((found) => Effect.mapError(found, () => refused(`${what} names account ${name}, which does not exist`))),
      Effect.map((account) => account.id)
    )
  const requireAccount = (name: string, what: string) =>
    knownAccounts.has(name) ? Effect.void : Effect.asVoid(accountIdOf(name, what))
  for (const account of accounts) {
    for (const member of account.members) {
      if (!(yield* userExists(member.user))) {
        return yield* refused(`account ${account.name} names user ${member.user}, who is not in "users"`)
      }
    }
  }
  for (const deployment of deployments) {
    yield* requireAccount(deployment.account, `deployment ${deployment.id}`)
    yield* requireAccount(deployment.agent.split("/")[0]!, `deployment ${deployment.id} (agent ${deployment.agent})`)
  }
  for (const file of files) {
    const what = `file ${file.key}`
    if (!(yield* userExists(file.owner))) return yield* refused(`${what} names owner ${file.owner}, who is not in "users"`)
    if (!knownDeployments.has(file.deployment)) {
      yield* deploymentStore.findById(Deployment.DeploymentId.make(file.deployment)).pipe(
        Effect.flatMap((found) => Effect.mapError(found, () => refused(`${what} names deployment ${file.deployment}, which does not exist`)))
      )
    }
  }
  for (const trace of traces) yield* requireAccount(trace.agent.split("/")[0]!, `trace ${trace.trace_id} (agent ${trace.agent})`)

  // Bytes first: a record never points at an object that is not there.
  const fileRecords: Array<File.FileRecord> = []
  for (const file of files) {
    const bytes = encoder.encode(file.content)
    const ref = { deployment_id: Deployment.DeploymentId.make(file.deployment), owner_id: file.owner, key: file.key }
    if (file.status === "ready") {
      yield* objects.put(Files.objectKey(ref), Stream.make(bytes), { contentType: file.content_type, maxBytes: bytes.byteLength }).pipe(
        Effect.mapError((error) =>
          refused(`file ${file.key}: the object store refused its content (${error._tag === "ObjectStoreError" ? error.message : "too large"})`)
        )
      )
    }
    const existing = yield* fileStore.find(ref.deployment_id, ref.key)
    fileRecords.push(
      new File.FileRecord({
        ...ref,
        filename: file.filename,
        content_type: file.content_type,
        size: bytes.byteLength,
        status: file.status,
        origin: "user",
        conversation_id: Option.none(),
        created_at: Option.match(existing, { onNone: () => DateTime.unsafeNow(), onSome: (f) => f.created_at })
      })
    )
  }

  yield* tx.withTransaction(Effect.gen(function*() {
    for (const user of users) {
      yield* store.upsertUser(new Account.User({ id: user.id, name: user.name }))
      for (const token of user.tokens) yield* identity.issue(user.id, token)
    }
    for (const account of accounts) {
      const now = yield* DateTime.now
      const stored = yield* store.ensure({ id: Ids.AccountId.make(yield* ids.next), name: account.name, now })
      for (const member of account.members) yield* store.setMembership(stored.id, member.user, member.role)
    }
    for (const deployment of deployments) {
      const [publisher, agentName] = deployment.agent.split("/") as [string, string]
      const owner = yield* accountIdOf(deployment.account, `deployment ${deployment.id}`)
      const publisherId = yield* accountIdOf(publisher, `deployment ${deployment.id} (agent ${deployment.agent})`)
      yield* deploymentStore.upsert({
        id: deployment.id,
        account_id: owner,
        publisher_id: publisherId,
        agent_name: Ids.AgentName.make(agentName),
        build_id: Ids.BuildId.make(deployment.build_id),
        namespace: deployment.namespace,
        status: deployment.status,
        deployed_at: deployment.deployed_at,
        undeployed_at: Option.fromNullable(deployment.undeployed_at),
        spec: deployment.spec ?? {}
      })
    }
    for (const record of fileRecords) yield* fileStore.upsert(record)
    const traceRecords: Array<Trace.TraceRecord> = []
    for (const trace of traces) {
      const [publisher, agentName] = trace.agent.split("/") as [string, string]
      const publisherId = yield* accountIdOf(publisher, `trace ${trace.trace_id} (agent ${trace.agent})`)
      traceRecords.push(
        new Trace.TraceRecord({
          publisher_id: publisherId,
          agent_name: Ids.AgentName.make(agentName),
          account_id: publisherId,
          owner_id: Option.none(),
          trace_id: trace.trace_id,
          name: trace.name,
          status: trace.status,
          latency_ms: trace.latency_ms,
          input: Trace.truncate(trace.input),
          output: Trace.truncate(trace.output),
          timestamp: trace.timestamp
        })
      )
    }
    if (traceRecords.length > 0) yield* traceStore.append(traceRecords)
  }))
  const report: LoadReport = {
    users: users.length,
    accounts: accounts.length,
    deployments: deployments.length,
    files: files.length,
    traces: traces.length
  }
  return report
})
