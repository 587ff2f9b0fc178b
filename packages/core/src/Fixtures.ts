/**
 * Seed data for development and black-box tests (extensions.md, "Fixtures
 * file"). Loading is idempotent: loading the same fixtures twice changes
 * nothing. Unknown keys are refused with a message that names them.
 */
import { DateTime, Effect, Option, Schema } from "effect"
import { User } from "./Account.js"
import { InvalidRequest } from "./Errors.js"
import { DeploymentId } from "./Deployment.js"
import { AccountId, AccountName, AgentName, BuildId, Role, UserId } from "./Ids.js"
import { Identity } from "./Identity.js"
import { AccountStore, DeploymentStore, IdGenerator, Transactor } from "./Ports.js"
import { formatParseError } from "./SchemaIssues.js"
import { orFail } from "./internal/lookup.js"

const FixtureUser = Schema.Struct({
  id: UserId,
  name: Schema.String,
  tokens: Schema.optionalWith(Schema.Array(Schema.NonEmptyString), { default: () => [] })
})

const FixtureAccount = Schema.Struct({
  name: AccountName,
  members: Schema.optionalWith(Schema.Array(Schema.Struct({ user: UserId, role: Role })), { default: () => [] })
})

const AgentRef = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\/[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, {
    message: () => "must be <account>/<agent>"
  })
)

const FixtureDeployment = Schema.Struct({
  id: DeploymentId,
  account: AccountName,
  agent: AgentRef,
  build_id: BuildId,
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
  owner: UserId,
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

/** Keys of the format whose feature has not landed yet: validated, not loaded. */
export const pendingKeys = ["files", "traces"] as const

/** Decodes fixtures from parsed JSON; unknown keys and bad values are refused with their path. */
export const decode = (input: unknown): Effect.Effect<Fixtures, InvalidRequest> =>
  Schema.decodeUnknown(FixturesSchema, { onExcessProperty: "error", errors: "all" })(input).pipe(
    Effect.mapError((error) =>
      new InvalidRequest({ details: `fixtures: ${formatParseError(error, "fixtures")}` })
    )
  )

/** Decodes fixtures from JSON text. */
export const parse = (text: string): Effect.Effect<Fixtures, InvalidRequest> =>
  Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new InvalidRequest({ details: `fixtures: not JSON: ${(error as Error).message}` })
  }).pipe(Effect.flatMap(decode))

/** What a load did, for the log. */
export interface LoadReport {
  readonly users: number
  readonly accounts: number
  readonly deployments: number
  /** Keys present in the fixtures whose loading arrives with a later feature. */
  readonly deferred: ReadonlyArray<string>
}

/** Loads users, tokens, accounts and memberships in one transaction. */
export const load = Effect.fn("Fixtures.load")(function*(fixtures: Fixtures) {
  const store = yield* AccountStore
  const identity = yield* Identity
  const ids = yield* IdGenerator
  const tx = yield* Transactor
  const deploymentStore = yield* DeploymentStore
  const users = fixtures.users ?? []
  const accounts = fixtures.accounts ?? []
  const deployments = fixtures.deployments ?? []
  const known = new Set(users.map((u) => u.id))
  const accountIdOf = (name: string, what: string) =>
    store.findByName(AccountName.make(name)).pipe(
      orFail(() => new InvalidRequest({ details: `fixtures: ${what} names account ${name}, which does not exist` })),
      Effect.map((account) => account.id)
    )
  for (const account of accounts) {
    for (const member of account.members) {
      if (!known.has(member.user) && Option.isNone(yield* store.findUser(member.user))) {
        return yield* new InvalidRequest({
          details: `fixtures: account ${account.name} names user ${member.user}, who is not in "users"`
        })
      }
    }
  }
  yield* tx.withTransaction(Effect.gen(function*() {
    for (const user of users) {
      yield* store.upsertUser(new User({ id: user.id, name: user.name }))
      for (const token of user.tokens) yield* identity.issue(user.id, token)
    }
    for (const account of accounts) {
      const now = yield* DateTime.now
      const stored = yield* store.ensure({ id: AccountId.make(yield* ids.next), name: account.name, now })
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
        agent_name: AgentName.make(agentName),
        build_id: BuildId.make(deployment.build_id),
        namespace: deployment.namespace,
        status: deployment.status,
        deployed_at: deployment.deployed_at,
        undeployed_at: Option.fromNullable(deployment.undeployed_at),
        spec: deployment.spec ?? {}
      })
    }
  }))
  const report: LoadReport = {
    users: users.length,
    accounts: accounts.length,
    deployments: deployments.length,
    deferred: pendingKeys.filter((key) => fixtures[key] !== undefined)
  }
  return report
})
