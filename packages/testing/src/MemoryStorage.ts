/**
 * Every storage port in memory: a test double for use-case and HTTP tests
 * (no native module, nothing on disk). It passes the same storage contract
 * suite as the SQL adapters. Transactions run one at a time and restore a
 * snapshot when they fail.
 */
import { Account, Agent, Conversation, Deployment, Event, File, Ids, Ports, Secret, type Token, Trace, TraceStats, Turn } from "@hosting/core"
import { Context, DateTime, Effect, Exit, FiberRef, Layer, Option, type Redacted } from "effect"

interface State {
  users: Map<string, Account.User>
  tokens: Map<string, {
    hash: string
    user_id: Ids.UserId
    expires_at: Option.Option<DateTime.Utc>
    parent_hash: Option.Option<string>
    created_at: DateTime.Utc
    personal: { readonly id: string; readonly name: string } | undefined
    scopes: Option.Option<ReadonlyArray<Token.Scope>>
    accounts: Option.Option<ReadonlyArray<Ids.AccountId>>
    last_used_at: Option.Option<DateTime.Utc>
  }>
  instanceAdmins: Set<string>
  setupCodes: Set<string>
  invitations: Map<string, Ports.Invitation>
  secrets: Map<string, {
    account_id: Ids.AccountId
    name: Secret.SecretName
    value: Redacted.Redacted<string>
    created_at: DateTime.Utc
    updated_at: DateTime.Utc
  }>
  audit: Array<Ports.AuditEntry>
  identities: Map<string, Ids.UserId>
  accounts: Map<string, Account.Account>
  memberships: Map<string, { account_id: Ids.AccountId; user_id: Ids.UserId; role: Ids.Role }>
  agents: Map<string, Omit<Agent.AgentRecord, "account">>
  builds: Map<string, Agent.Build>
  channels: Map<string, Agent.ChannelRecord>
  events: Array<Event.StoredEvent>
  nextEventId: number
  pruned: number
  deployments: Map<string, Parameters<Ports.DeploymentStore["Type"]["upsert"]>[0]>
  conversations: Map<string, Omit<Conversation.ConversationRecord, "assistant_streaming">>
  messages: Array<{
    conversation_id: string
    client_message_id: string | undefined
    message: Conversation.Message
    lease: Ports.ReplyLease | undefined
  }>
  files: Map<string, File.FileRecord>
  traces: Map<string, Trace.TraceRecord>
  /** Spans by their trace's key (`Trace.spanTraceKey`), then by span id. */
  spans: Map<string, Map<string, Trace.SpanRecord>>
  deviceCodes: Map<string, Ports.DeviceCodeRecord>
}

const emptyState = (): State => ({
  users: new Map(),
  tokens: new Map(),
  instanceAdmins: new Set(),
  setupCodes: new Set(),
  invitations: new Map(),
  secrets: new Map(),
  audit: [],
  identities: new Map(),
  accounts: new Map(),
  memberships: new Map(),
  agents: new Map(),
  builds: new Map(),
  channels: new Map(),
  events: [],
  nextEventId: 1,
  pruned: 0,
  deployments: new Map(),
  conversations: new Map(),
  messages: [],
  files: new Map(),
  traces: new Map(),
  spans: new Map(),
  deviceCodes: new Map()
})

const copy = (s: State): State => ({
  users: new Map(s.users),
  tokens: new Map(s.tokens),
  instanceAdmins: new Set(s.instanceAdmins),
  setupCodes: new Set(s.setupCodes),
  invitations: new Map(s.invitations),
  secrets: new Map(s.secrets),
  audit: [...s.audit],
  identities: new Map(s.identities),
  accounts: new Map(s.accounts),
  memberships: new Map(s.memberships),
  agents: new Map(s.agents),
  builds: new Map(s.builds),
  channels: new Map(s.channels),
  events: [...s.events],
  nextEventId: s.nextEventId,
  pruned: s.pruned,
  deployments: new Map(s.deployments),
  conversations: new Map(s.conversations),
  messages: [...s.messages],
  files: new Map(s.files),
  traces: new Map(s.traces),
  spans: new Map([...s.spans].map(([key, spans]) => [key, new Map(spans)])),
  deviceCodes: new Map(s.deviceCodes)
})

const buildKey = (agentId: string, buildId: string) => `${agentId}\u0000${buildId}`
const membershipKey = (accountId: string, userId: string) => `${accountId}\u0000${userId}`
const millis = (t: DateTime.Utc) => DateTime.toEpochMillis(t)
/** A filter that holds when it is absent. */
const unlessNone = <A>(filter: Option.Option<A>, test: (a: A) => boolean) => Option.isNone(filter) || test(filter.value)
const byTimeDesc = (a: DateTime.Utc, b: DateTime.Utc) => DateTime.toEpochMillis(b) - DateTime.toEpochMillis(a)

/** Builds the in-memory ports over one shared state. */
export const make = Effect.gen(function*() {
  let state = emptyState()
  const lock = yield* Effect.makeSemaphore(1)
  const inTransaction = yield* FiberRef.make(false)

  const accountName = (id: Ids.AccountId) => state.accounts.get(id)!.name
  const withAccount = (agent: Omit<Agent.AgentRecord, "account">) =>
    new Agent.AgentRecord({ ...agent, account: accountName(agent.account_id) })

  const transactor = Ports.Transactor.of({
    withTransaction: (effect) =>
      Effect.flatMap(FiberRef.get(inTransaction), (nested) =>
        // Without a generator, which would be a new generator function for every transaction (docs/decisions.md,
        // "Generator functions made once").
        nested ? effect : lock.withPermits(1)(Effect.suspend(() => {
          const snapshot = copy(state)
          return Effect.flatMap(Effect.exit(Effect.locally(effect, inTransaction, true)), (exit) => {
            if (Exit.isFailure(exit)) state = snapshot
            return exit
          })
        })))
  })

  const membershipsOf = (userId: Ids.UserId) =>
    [...state.memberships.values()]
      .filter((m) => m.user_id === userId)
      .map((m) => new Account.Membership({ account_id: m.account_id, account: accountName(m.account_id), role: m.role }))
      .sort((a, b) => a.account.localeCompare(b.account))

  const accounts = Ports.AccountStore.of({
    findByName: (name) => Effect.sync(() => Option.fromNullable([...state.accounts.values()].find((a) => a.name === name))),
    findById: (id) => Effect.sync(() => Option.fromNullable(state.accounts.get(id))),
    ensure: (input) =>
      Effect.sync(() => {
        const existing = [...state.accounts.values()].find((a) => a.name === input.name)
        if (existing) return existing
        const account = new Account.Account({ id: input.id, name: input.name, created_at: input.now })
        state.accounts.set(account.id, account)
        return account
      }),
    create: (input) =>
      Effect.sync(() => {
        if ([...state.accounts.values()].some((a) => a.name === input.name)) return Option.none()
        const account = new Account.Account({ id: input.id, name: input.name, created_at: input.now })
        state.accounts.set(account.id, account)
        return Option.some(account)
      }),
    rename: (id, name) =>
      Effect.sync(() => {
        const holder = [...state.accounts.values()].find((a) => a.name === name)
        if (holder) return holder.id === id
        const account = state.accounts.get(id)
        if (account) state.accounts.set(id, new Account.Account({ ...account, name }))
        return true
      }),
    findUser: (id) => Effect.sync(() => Option.fromNullable(state.users.get(id))),
    upsertUser: (user) => Effect.sync(() => void state.users.set(user.id, user)),
    hasUsers: Effect.sync(() => state.users.size > 0),
    addUser: (input) =>
      Effect.sync(() => {
        state.users.set(input.id, new Account.User({ id: input.id, name: input.name }))
        if (input.instance_admin) state.instanceAdmins.add(input.id)
      }),
    addSetupCode: (input) => Effect.sync(() => void state.setupCodes.add(input.hash)),
    findIdentity: (issuer, subject) => Effect.sync(() => Option.fromNullable(state.identities.get(`${issuer}\u0000${subject}`))),
    linkIdentity: (input) =>
      Effect.sync(() => {
        const key = `${input.issuer}\u0000${input.subject}`
        if (state.identities.has(key)) return false
        state.identities.set(key, input.user_id)
        return true
      }),
    liveDeployments: (accountId) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) => (d.account_id === accountId || d.publisher_id === accountId) && Option.isNone(d.undeployed_at))
          .map((d) => d.id as string)
      ),
    deleteAccount: (accountId) =>
      Effect.sync(() => {
        if (!state.accounts.has(accountId)) return Option.none()
        const deployments = new Set(
          [...state.deployments.values()].filter((d) => d.account_id === accountId || d.publisher_id === accountId).map((d) => d.id as string)
        )
        const conversations = new Set(
          [...state.conversations.values()].filter((c) => deployments.has(c.deployment_id)).map((c) => c.id as string)
        )
        state.messages = state.messages.filter((m) => !conversations.has(m.conversation_id))
        for (const id of conversations) state.conversations.delete(id)
        const files = [...state.files.entries()].filter(([, f]) => deployments.has(f.deployment_id))
        for (const [key] of files) state.files.delete(key)
        for (const [key, t] of state.traces) if (t.publisher_id === accountId || t.account_id === accountId) state.traces.delete(key)
        for (const [key, spans] of state.spans) {
          if ([...spans.values()].some((span) => span.publisher_id === accountId)) state.spans.delete(key)
        }
        for (const id of deployments) state.deployments.delete(id)
        const agents = new Set([...state.agents.values()].filter((a) => a.account_id === accountId).map((a) => a.id as string))
        for (const [key, b] of state.builds) if (agents.has(b.agent_id)) state.builds.delete(key)
        for (const id of agents) state.agents.delete(id)
        for (const [key, m] of state.memberships) if (m.account_id === accountId) state.memberships.delete(key)
        for (const [key, i] of state.invitations) if (i.account_id === accountId) state.invitations.delete(key)
        for (const [key, secret] of state.secrets) if (secret.account_id === accountId) state.secrets.delete(key)
        state.audit = state.audit.filter((e) => e.account_id !== accountId)
        state.events = state.events.filter((e) => e.account_id !== accountId)
        state.accounts.delete(accountId)
        return Option.some(files.map(([, f]) => ({ deployment_id: f.deployment_id as string, owner_id: f.owner_id, key: f.key, ready: f.status === "ready" })))
      }),
    putSecret: (input) =>
      Effect.sync(() => {
        const key = membershipKey(input.account_id, input.name)
        const existing = state.secrets.get(key)
        state.secrets.set(key, {
          account_id: input.account_id,
          name: input.name,
          value: input.value,
          created_at: existing?.created_at ?? input.now,
          updated_at: input.now
        })
        return { created: existing === undefined }
      }),
    secretsOf: (accountId) =>
      Effect.sync(() =>
        [...state.secrets.values()]
          .filter((secret) => secret.account_id === accountId)
          .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
          .map(({ created_at, name, updated_at }) => new Secret.SecretSummary({ name, created_at, updated_at }))
      ),
    secretValues: (accountId, names) =>
      Effect.sync(() =>
        new Map(names.flatMap((name) => {
          const found = state.secrets.get(membershipKey(accountId, name))
          return found === undefined ? [] : [[name, found.value] as const]
        }))
      ),
    removeSecret: (accountId, name) => Effect.sync(() => state.secrets.delete(membershipKey(accountId, name))),
    recordAudit: (entries) =>
      Effect.sync(() => {
        for (const entry of entries) state.audit.push({ ...entry, id: state.audit.length + 1 })
      }),
    auditOf: (accountId, page) =>
      Effect.sync(() => {
        const all = state.audit.filter((e) => e.account_id === accountId).reverse()
        return { entries: all.slice(page.offset, page.offset + page.limit), total: all.length }
      }),
    addInvitation: (invitation) => Effect.sync(() => void state.invitations.set(invitation.id, invitation)),
    invitationsOf: (accountId, now) =>
      Effect.sync(() =>
        [...state.invitations.values()]
          .filter((i) => i.account_id === accountId && DateTime.greaterThan(i.expires_at, now))
          .sort((a, b) => DateTime.toEpochMillis(b.created_at) - DateTime.toEpochMillis(a.created_at) || b.id.localeCompare(a.id))
      ),
    removeInvitation: (accountId, id) =>
      Effect.sync(() => state.invitations.get(id)?.account_id === accountId && state.invitations.delete(id)),
    takeInvitation: (codeHash, now) =>
      Effect.sync(() => {
        const found = [...state.invitations.values()].find((i) => i.code_hash === codeHash)
        if (found === undefined || !DateTime.greaterThan(found.expires_at, now)) return Option.none()
        state.invitations.delete(found.id)
        return Option.some(found)
      }),
    spendSetupCode: (hash) =>
      Effect.sync(() => {
        if (!state.setupCodes.has(hash)) return false
        state.setupCodes.clear()
        return true
      }),
    setMembership: (account_id, user_id, role) =>
      Effect.sync(() => void state.memberships.set(membershipKey(account_id, user_id), { account_id, user_id, role })),
    // Transactions on this store run one at a time.
    lockMembers: () => Effect.void,
    removeMembership: (account_id, user_id) => Effect.sync(() => state.memberships.delete(membershipKey(account_id, user_id))),
    membershipsOf: (userId) => Effect.sync(() => membershipsOf(userId)),
    membersOf: (accountId) =>
      Effect.sync(() =>
        [...state.memberships.values()]
          .filter((m) => m.account_id === accountId)
          .map((m) => new Account.Member({ user_id: m.user_id, name: state.users.get(m.user_id)?.name ?? "", role: m.role }))
          .sort((a, b) => a.user_id.localeCompare(b.user_id))
      )
  })

  const tokens = Ports.TokenStore.of({
    findPrincipal: (hash) =>
      Effect.sync(() => {
        const token = state.tokens.get(hash)
        const user = token === undefined ? undefined : state.users.get(token.user_id)
        if (token === undefined || user === undefined) return Option.none()
        return Option.some({
          hash,
          expires_at: token.expires_at,
          principal: { user, memberships: membershipsOf(user.id) },
          limits: { id: Option.fromNullable(token.personal?.id), scopes: token.scopes, accounts: token.accounts }
        })
      }),
    add: (input) =>
      Effect.sync(() => {
        if (state.tokens.has(input.hash)) return true
        const parent = Option.isSome(input.parent_hash) ? state.tokens.get(input.parent_hash.value) : undefined
        if (Option.isSome(input.parent_hash) && parent === undefined) return false
        const limits = input.limits ?? parent ?? { scopes: Option.none(), accounts: Option.none() }
        state.tokens.set(input.hash, {
          hash: input.hash,
          user_id: input.user_id,
          expires_at: input.expires_at,
          parent_hash: input.parent_hash,
          created_at: input.now,
          personal: input.personal,
          scopes: limits.scopes,
          accounts: limits.accounts,
          last_used_at: Option.none()
        })
        return true
      }),
    listPersonal: (userId) =>
      Effect.sync(() =>
        [...state.tokens.values()]
          .flatMap((token) =>
            token.user_id !== userId || token.personal === undefined ? [] : [{
              id: token.personal.id,
              name: token.personal.name,
              scopes: token.scopes,
              accounts: token.accounts,
              created_at: token.created_at,
              expires_at: token.expires_at,
              last_used_at: token.last_used_at
            }]
          )
          .sort((a, b) => DateTime.toEpochMillis(b.created_at) - DateTime.toEpochMillis(a.created_at) || b.id.localeCompare(a.id))
      ),
    removePersonal: (userId, id) =>
      Effect.suspend(() => {
        const token = [...state.tokens.values()].find((t) => t.user_id === userId && t.personal?.id === id)
        return token === undefined || token.personal === undefined
          ? Effect.succeed(Option.none())
          : Effect.as(tokens.remove(token.hash), Option.some({ name: token.personal.name, accounts: token.accounts }))
      }),
    touch: (hash, now) =>
      Effect.sync(() => {
        const token = state.tokens.get(hash)
        if (token !== undefined) state.tokens.set(hash, { ...token, last_used_at: Option.some(now) })
      }),
    // As the SQL stores' foreign keys do: what was made or decided with a token goes with it.
    remove: (hash) =>
      Effect.sync(() => {
        if (!state.tokens.has(hash)) return false
        const gone = new Set([hash])
        for (const removed of gone) {
          state.tokens.delete(removed)
          for (const token of state.tokens.values()) {
            if (Option.contains(token.parent_hash, removed)) gone.add(token.hash)
          }
        }
        for (const code of state.deviceCodes.values()) {
          if (Option.exists(code.decided_by, (by) => gone.has(by))) state.deviceCodes.delete(code.device_hash)
        }
        return true
      })
  })

  const findAgentRecord = (accountId: Ids.AccountId, name: Ids.AgentName) =>
    [...state.agents.values()].find((a) => a.account_id === accountId && a.name === name)

  const publishedOf = (agentId: string) =>
    [...state.builds.values()].filter((b) => b.agent_id === agentId && Option.isSome(b.version))

  const agents = Ports.AgentStore.of({
    findAgent: (accountId, name) => Effect.sync(() => Option.map(Option.fromNullable(findAgentRecord(accountId, name)), withAccount)),
    upsertAgent: (input) =>
      Effect.sync(() => {
        const existing = findAgentRecord(input.account_id, input.name)
        const record = existing
          ? { ...existing, registry: input.registry, updated_at: input.now }
          : { id: input.id, account_id: input.account_id, name: input.name, registry: input.registry, created_at: input.now, updated_at: input.now }
        state.agents.set(record.id, record)
        return withAccount(record)
      }),
    findBuild: (agentId, buildId) => Effect.sync(() => Option.fromNullable(state.builds.get(buildKey(agentId, buildId)))),
    findBuildByVersion: (agentId, version) =>
      Effect.sync(() =>
        Option.fromNullable(
          [...state.builds.values()].find((b) => b.agent_id === agentId && Option.getOrUndefined(b.version) === version)
        )
      ),
    upsertBuild: (build) =>
      Effect.sync(() => {
        const key = buildKey(build.agent_id, build.build_id)
        const previous = state.builds.get(key)
        const stored = previous
          ? new Agent.Build({
            ...build,
            version: previous.version,
            published_at: previous.published_at,
            registered_at: previous.registered_at,
            yanked: previous.yanked
          })
          : build
        state.builds.set(key, stored)
        return build
      }),
    publishBuild: (input) =>
      Effect.sync(() => {
        const key = buildKey(input.agent_id, input.build_id)
        const build = state.builds.get(key)
        if (build) {
          state.builds.set(
            key,
            new Agent.Build({ ...build, version: Option.some(input.version), published_at: Option.some(input.now), updated_at: input.now })
          )
        }
      }),
    yankBuild: (input) =>
      Effect.sync(() => {
        const key = buildKey(input.agent_id, input.build_id)
        const build = state.builds.get(key)
        if (build) {
          const yanked = Option.match(input.reason, {
            onNone: () => undefined,
            onSome: (reason) => new Agent.Yank({ reason, yanked_at: input.now })
          })
          state.builds.set(key, new Agent.Build({ ...build, yanked, updated_at: input.now }))
        }
      }),
    listChannels: (agentId) =>
      Effect.sync(() =>
        [...state.channels.values()].filter((c) => c.agent_id === agentId).sort((a, b) => a.name.localeCompare(b.name))
      ),
    setChannel: (channel) => Effect.sync(() => void state.channels.set(buildKey(channel.agent_id, channel.name), channel)),
    removeChannel: (agentId, name) => Effect.sync(() => state.channels.delete(buildKey(agentId, name))),
    listBuilds: (agentId) =>
      Effect.sync(() =>
        [...state.builds.values()]
          .filter((b) => b.agent_id === agentId)
          .sort((a, b) => byTimeDesc(a.registered_at, b.registered_at) || b.build_id.localeCompare(a.build_id))
      ),
    listPublished: (query) =>
      Effect.sync(() => {
        const q = Option.map(query.q, (s) => s.toLowerCase())
        const matching = [...state.agents.values()]
          .filter((a) => publishedOf(a.id).length > 0)
          .filter((a) => Option.match(q, { onNone: () => true, onSome: (s) => `${accountName(a.account_id)}/${a.name}`.includes(s) }))
          .map((a) => {
            const published = publishedOf(a.id).sort((x, y) =>
              Ids.compareSemVerDescending(Option.getOrThrow(x.version), Option.getOrThrow(y.version))
            )
            const last = published.map((b) => Option.getOrThrow(b.published_at)).sort(byTimeDesc)[0]!
            // The newest version that is not yanked; when every one is, the newest.
            const latest = Agent.installableOf(published)[0] ?? published[0]!
            const description = latest.spec["description"]
            return new Agent.AgentSummary({
              account: accountName(a.account_id),
              name: a.name,
              registry: a.registry,
              description: typeof description === "string" ? description : undefined,
              latest_version: Option.getOrThrow(latest.version),
              latest_build_id: latest.build_id,
              published_at: last,
              versions_count: published.length
            })
          })
          .sort((x, y) => byTimeDesc(x.published_at, y.published_at))
        return { agents: matching.slice(query.offset, query.offset + query.limit), total: matching.length }
      })
  })

  const eventsAfter = (accountId: Ids.AccountId, afterId: Option.Option<string>) => {
    const from = Number(Option.getOrElse(Option.filter(afterId, (id) => /^\d{1,15}$/.test(id)), () => "0"))
    return state.events.filter((e) => e.account_id === accountId && Number(e.id) > from)
  }

  const events = Ports.EventLog.of({
    append: (newEvents, now) =>
      Effect.sync(() =>
        newEvents.map((event) => {
          const stored = new Event.StoredEvent({
            id: String(state.nextEventId++),
            account_id: event.account_id,
            type: event.type,
            data: { ...event.data },
            created_at: now
          })
          state.events.push(stored)
          return stored
        })
      ),
    after: (accountId, afterId, limit) => Effect.sync(() => eventsAfter(accountId, afterId).slice(0, limit)),
    latest: (accountId, afterId, limit) => Effect.sync(() => eventsAfter(accountId, afterId).slice(-limit)),
    horizon: Effect.sync(() => {
      const newest = state.nextEventId - 1
      return { pruned: BigInt(state.pruned), newest: BigInt(Math.max(newest, state.pruned)) }
    }),
    prune: (before) =>
      Effect.sync(() => {
        const old = state.events.filter((e) => DateTime.lessThan(e.created_at, before))
        if (old.length === 0) return 0
        const last = Math.max(...old.map((e) => Number(e.id)))
        const kept = state.events.filter((e) => Number(e.id) > last)
        const removed = state.events.length - kept.length
        state.events = kept
        state.pruned = Math.max(state.pruned, last)
        return removed
      })
  })

  type DeploymentInput = Parameters<Ports.DeploymentStore["Type"]["upsert"]>[0]
  const toDeployment = (r: DeploymentInput) =>
    new Deployment.DeploymentRecord({
      ...r,
      status_reason: r.status_reason,
      status_message: r.status_message,
      account: accountName(r.account_id),
      publisher: accountName(r.publisher_id),
      spec: { ...r.spec }
    })
  const newestFirst = (a: DeploymentInput, b: DeploymentInput) =>
    byTimeDesc(a.deployed_at, b.deployed_at) || b.id.localeCompare(a.id)

  const deployments = Ports.DeploymentStore.of({
    upsert: (record) =>
      Effect.sync(() => {
        // A replaced record keeps its settings, as the SQL stores do.
        const settings = state.deployments.get(record.id)?.concurrent_send ?? record.concurrent_send
        state.deployments.set(record.id, { ...record, concurrent_send: settings })
      }),
    findById: (id) => Effect.sync(() => Option.map(Option.fromNullable(state.deployments.get(id)), toDeployment)),
    findByNamespace: (namespace) =>
      Effect.sync(() =>
        Option.map(
          Option.fromNullable([...state.deployments.values()].filter((d) => d.namespace === namespace).sort(newestFirst)[0]),
          toDeployment
        )
      ),
    liveInNamespace: (namespace) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) => d.namespace === namespace && Option.isNone(d.undeployed_at))
          .sort(newestFirst)
          .map(toDeployment)
      ),
    listForAgent: (publisherId, agentName, accountIds) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) => d.publisher_id === publisherId && d.agent_name === agentName && accountIds.includes(d.account_id))
          .sort(newestFirst)
          .map(toDeployment)
      ),
    listForAccount: (accountId, filter, page) =>
      Effect.sync(() => {
        const kept = [...state.deployments.values()]
          .filter((d) =>
            d.account_id === accountId && (
              filter.status === undefined ||
              (filter.status === "live" ? Option.isNone(d.undeployed_at) : filter.status === "ended"
                ? Option.isSome(d.undeployed_at)
                : d.status === filter.status)
            )
          )
          .sort(newestFirst)
        return { deployments: kept.slice(page.offset, page.offset + page.limit).map(toDeployment), total: kept.length }
      }),
    liveOfAccounts: (accountIds, after, limit) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) => accountIds.includes(d.account_id) && Option.isNone(d.undeployed_at) && (after === undefined || d.id > after))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, limit)
          .map(toDeployment)
      ),
    markUndeployed: (id, status, at) =>
      Effect.sync(() => {
        const record = state.deployments.get(id)
        if (record) state.deployments.set(id, { ...record, status, status_reason: undefined, status_message: undefined, undeployed_at: Option.some(at) })
      }),
    setStatus: (id, from, to) =>
      Effect.sync(() => {
        const record = state.deployments.get(id)
        if (record === undefined || Option.isSome(record.undeployed_at) || record.status !== from) return false
        state.deployments.set(id, { ...record, status: to.status, status_reason: to.status_reason, status_message: to.status_message })
        return true
      }),
    listLiveWithStatus: (statuses, after, limit) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) => Option.isNone(d.undeployed_at) && statuses.includes(d.status) && (after === undefined || d.id > after))
          .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          .slice(0, limit)
          .map(toDeployment)
      ),
    listFollowing: (publisherId, agentName) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) =>
            d.publisher_id === publisherId && d.agent_name === agentName && d.follow !== undefined && Option.isNone(d.undeployed_at)
          )
          .sort((a, b) => newestFirst(b, a))
          .map(toDeployment)
      ),
    liveOfBuild: (publisherId, agentName, buildId) =>
      Effect.sync(() =>
        [...state.deployments.values()]
          .filter((d) =>
            d.publisher_id === publisherId && d.agent_name === agentName && d.build_id === buildId && Option.isNone(d.undeployed_at)
          )
          .sort((a, b) => newestFirst(b, a))
          .map(toDeployment)
      ),
    updateSettings: (id, settings) =>
      Effect.sync(() => {
        const record = state.deployments.get(id)
        if (record) state.deployments.set(id, { ...record, concurrent_send: settings.concurrent_send })
      }),
    accountsDeploying: (publisherId, agentName) =>
      Effect.sync(() =>
        [...new Set(
          [...state.deployments.values()]
            .filter((d) =>
              d.publisher_id === publisherId && d.agent_name === agentName && Option.isNone(d.undeployed_at) &&
              d.account_id !== publisherId
            )
            .map((d) => d.account_id)
        )].sort()
      )
  })

  const streamingIn = (id: string) => state.messages.some((m) => m.conversation_id === id && m.message.status === "streaming")
  const withStreaming = (c: Omit<Conversation.ConversationRecord, "assistant_streaming">) =>
    new Conversation.ConversationRecord({ ...c, assistant_streaming: streamingIn(c.id) })
  const messagesOf = (id: string) => state.messages.filter((m) => m.conversation_id === id)

  /** A turn on the state as it is (transactions run one at a time): what is stored read, the turn decided, then written. */
  const startTurn = (turn: Ports.TurnInput): Ports.TurnStart => {
    const id = turn.conversation_id
    const clientId = Option.getOrUndefined(turn.client_message_id)
    const existing = state.conversations.get(id)
    const stored = existing === undefined ? Option.none() : Option.some<Turn.Stored>({
      ...existing,
      streaming: messagesOf(id).some((m) => m.message.status === "streaming"),
      earlier: Option.fromNullable(
        clientId === undefined ? undefined : messagesOf(id).find((m) => m.client_message_id === clientId)?.message
      )
    })
    const decision = Turn.decide(turn, stored)
    if (decision._tag !== "Accept") return decision
    state.messages.push(
      { conversation_id: id, client_message_id: clientId, message: turn.message, lease: undefined },
      { conversation_id: id, client_message_id: undefined, message: turn.reply, lease: turn.lease }
    )
    state.conversations.set(id, {
      id,
      deployment_id: turn.deployment_id,
      owner_id: turn.owner_id,
      title: existing?.title ?? turn.title,
      created_at: existing?.created_at ?? turn.message.timestamp,
      updated_at: turn.message.timestamp,
      user_messages: decision.user_messages,
      terminal: decision.terminal
    })
    return Turn.started(decision)
  }

  const conversations = Ports.ConversationStore.of({
    find: (id) => Effect.sync(() => Option.map(Option.fromNullable(state.conversations.get(id)), withStreaming)),
    listFor: (deploymentId, ownerId) =>
      Effect.sync(() =>
        [...state.conversations.values()]
          .filter((c) => c.deployment_id === deploymentId && c.owner_id === ownerId)
          .sort((a, b) => byTimeDesc(a.updated_at, b.updated_at) || a.id.localeCompare(b.id))
          .map((c) =>
            new Conversation.ConversationSummary({
              conversation_id: c.id,
              title: c.title,
              updated_at: c.updated_at,
              assistant_streaming: streamingIn(c.id)
            })
          )
      ),
    setTitle: (id, title, now) =>
      Effect.sync(() => {
        const c = state.conversations.get(id)
        if (c) state.conversations.set(id, { ...c, title, updated_at: now })
      }),
    startTurn: (turn) => Effect.sync(() => startTurn(turn)),
    append: ({ client_message_id, conversation_id, lease, message }) =>
      Effect.sync(() => {
        state.messages.push({ conversation_id, client_message_id: Option.getOrUndefined(client_message_id), message, lease })
        const c = state.conversations.get(conversation_id)
        if (c) {
          state.conversations.set(conversation_id, {
            ...c,
            updated_at: message.timestamp,
            user_messages: c.user_messages + (message.role === "user" ? 1 : 0)
          })
        }
      }),
    messages: (conversationId) => Effect.sync(() => messagesOf(conversationId).map((m) => m.message)),
    latestReply: (conversationId) =>
      Effect.sync(() =>
        Option.fromNullable(messagesOf(conversationId).filter((m) => m.message.role === "assistant").at(-1)?.message)
      ),
    updateMessage: (id, content, status) =>
      Effect.sync(() => {
        const entry = state.messages.find((m) => m.message.message_id === id)
        if (entry) entry.message = new Conversation.Message({ ...entry.message, content, status })
      }),
    flushReplies: (progress) =>
      Effect.sync(() => {
        for (const { content, id } of progress) {
          const entry = state.messages.find((m) => m.message.message_id === id)
          if (entry?.message.status === "streaming") entry.message = new Conversation.Message({ ...entry.message, content })
        }
      }),
    renewLeases: (owner, expiresAt) =>
      Effect.sync(() => {
        for (const m of state.messages) {
          if (m.lease?.owner === owner && m.message.status === "streaming") m.lease = { owner, expires_at: expiresAt }
        }
      }),
    // Memory is one process's: no owner it knows of is gone.
    goneOwners: Effect.succeed([]),
    closeStreaming: (leaseEndedBefore, ownersGone = []) =>
      Effect.sync(() =>
        state.messages
          .filter((m) =>
            m.message.status === "streaming" &&
            unlessNone(leaseEndedBefore, (before) =>
              m.lease === undefined || millis(m.lease.expires_at) < millis(before) || ownersGone.includes(m.lease.owner))
          )
          .map((m) => {
            m.message = new Conversation.Message({ ...m.message, status: "failed" })
            return { conversation_id: Conversation.ConversationId.make(m.conversation_id), message: m.message }
          })
      )
  })

  const fileKey = (deploymentId: string, key: string) => `${deploymentId}\u0000${key}`
  const files = Ports.FileStore.of({
    upsert: (file) => Effect.sync(() => void state.files.set(fileKey(file.deployment_id, file.key), file)),
    find: (deploymentId, key) => Effect.sync(() => Option.fromNullable(state.files.get(fileKey(deploymentId, key)))),
    listFor: (deploymentId, ownerId) =>
      Effect.sync(() =>
        [...state.files.values()]
          .filter((f) => f.deployment_id === deploymentId && f.owner_id === ownerId)
          .sort((a, b) => byTimeDesc(a.created_at, b.created_at) || a.key.localeCompare(b.key))
      ),
    pendingBefore: (time, limit) =>
      Effect.sync(() =>
        [...state.files.values()]
          .filter((f) => f.status === "pending" && millis(f.created_at) < millis(time))
          .sort((a, b) =>
            millis(a.created_at) - millis(b.created_at) || a.deployment_id.localeCompare(b.deployment_id) || a.key.localeCompare(b.key)
          )
          .slice(0, limit)
      ),
    removePending: (deploymentId, key) =>
      Effect.sync(() => {
        const file = state.files.get(fileKey(deploymentId, key))
        return file?.status === "pending" && state.files.delete(fileKey(deploymentId, key))
      })
  })

  const traceKey = (t: { readonly publisher_id: string; readonly agent_name: string; readonly trace_id: string }) => Trace.spanTraceKey(t)
  /** Keeps on the trace of `key` the model and usage of its stored spans, as the SQL store does. */
  const refresh = (key: string) => {
    const trace = state.traces.get(key)
    const spans = [...(state.spans.get(key)?.values() ?? [])]
    if (trace !== undefined && spans.length > 0) state.traces.set(key, new Trace.TraceRecord({ ...trace, ...Trace.summaryOf(spans) }))
  }
  const traces = Ports.TraceStore.of({
    append: (records) =>
      Effect.sync(() =>
        records.forEach((t) => {
          const stored = state.traces.get(traceKey(t))
          if (stored !== undefined && !Trace.sameAudience(stored, t)) return
          // The summary is the store's: kept from the stored row until the spans say otherwise.
          state.traces.set(traceKey(t), new Trace.TraceRecord({ ...t, model: stored?.model ?? null, usage: stored?.usage ?? null }))
          refresh(traceKey(t))
        })
      ),
    appendSpans: (spans) =>
      Effect.sync(() => {
        const stored = new Map([...state.spans].map(([key, held]) => [key, new Set(held.keys())]))
        const touched = new Set<string>()
        for (const span of Trace.withinSpanBound(stored, spans)) {
          const key = Trace.spanTraceKey(span)
          let held = state.spans.get(key)
          if (held === undefined) state.spans.set(key, held = new Map())
          held.set(span.span_id, span)
          touched.add(key)
        }
        touched.forEach(refresh)
      }),
    stats: (q) =>
      Effect.sync(() => {
        const visible = [...state.traces.values()].filter((t) =>
          t.publisher_id === q.publisher_id && t.agent_name === q.agent_name && q.account_ids.includes(t.account_id) &&
          unlessNone(t.owner_id, (owner) => owner === q.viewer)
        )
        return q.bounds.map((b) =>
          TraceStats.figuresOf(visible.filter((t) => millis(t.timestamp) >= millis(b.start) && millis(t.timestamp) < millis(b.end)))
        )
      }),
    sweep: (before, max) =>
      Effect.sync(() => {
        const old = [...state.traces.entries()]
          .filter(([, t]) => millis(t.timestamp) < millis(before))
          .sort(([, a], [, b]) => millis(a.timestamp) - millis(b.timestamp))
          .slice(0, max)
          .map(([key]) => key)
        const orphans = [...state.spans.entries()]
          .filter(([key, held]) => !state.traces.has(key) && [...held.values()].some((s) => millis(s.start_time) < millis(before)))
          .slice(0, max)
          .map(([key]) => key)
        for (const key of [...old, ...orphans]) {
          state.traces.delete(key)
          state.spans.delete(key)
        }
        return old.length + orphans.length
      }),
    find: (lookup) =>
      Effect.sync(() => {
        const trace = state.traces.get(traceKey(lookup))
        if (
          trace === undefined || !lookup.account_ids.includes(trace.account_id) ||
          !unlessNone(trace.owner_id, (owner) => owner === lookup.viewer)
        ) return Option.none()
        return Option.some({ trace, spans: [...(state.spans.get(Trace.spanTraceKey(lookup))?.values() ?? [])] })
      }),
    query: (q) =>
      Effect.sync(() => {
        const matching = [...state.traces.values()]
          .filter((t) =>
            t.publisher_id === q.publisher_id && t.agent_name === q.agent_name && q.account_ids.includes(t.account_id) &&
            unlessNone(t.owner_id, (owner) => owner === q.viewer) &&
            unlessNone(q.start, (start) => millis(t.timestamp) >= millis(start)) &&
            unlessNone(q.end, (end) => millis(t.timestamp) <= millis(end)) &&
            unlessNone(q.status, (status) => t.status === status) &&
            unlessNone(q.model, (model) => t.model === model)
          )
          .sort((a, b) => byTimeDesc(a.timestamp, b.timestamp) || (a.trace_id < b.trace_id ? 1 : a.trace_id > b.trace_id ? -1 : 0))
        const page = Option.match(q.after, {
          onNone: () => matching,
          onSome: (after) =>
            matching.filter((t) =>
              millis(t.timestamp) < millis(after.timestamp) ||
              (millis(t.timestamp) === millis(after.timestamp) && t.trace_id < after.trace_id)
            )
        })
        return { traces: page.slice(q.offset, q.offset + q.limit), total: matching.length }
      })
  })

  const codeByUser = (userCode: string) => [...state.deviceCodes.values()].find((c) => c.user_code === userCode)
  const deviceCodes = Ports.DeviceCodeStore.of({
    insert: (record) => Effect.sync(() => void state.deviceCodes.set(record.device_hash, record)),
    findByUserCode: (userCode) => Effect.sync(() => Option.fromNullable(codeByUser(userCode))),
    findByDeviceHash: (hash) => Effect.sync(() => Option.fromNullable(state.deviceCodes.get(hash))),
    decide: (userCode, status, userId, decidedBy) =>
      Effect.sync(() => {
        const code = codeByUser(userCode)
        if (code === undefined || code.status !== "pending") return false
        state.deviceCodes.set(code.device_hash, { ...code, status, user_id: Option.some(userId), decided_by: Option.some(decidedBy) })
        return true
      }),
    recordPoll: (hash, at, interval) =>
      Effect.sync(() => {
        const code = state.deviceCodes.get(hash)
        if (code) state.deviceCodes.set(hash, { ...code, last_polled_at: Option.some(at), interval })
      }),
    remove: (hash) => Effect.sync(() => state.deviceCodes.delete(hash)),
    pruneExpired: (before) =>
      Effect.sync(() => {
        const expired = [...state.deviceCodes.values()].filter((c) => millis(c.expires_at) < millis(before))
        for (const c of expired) state.deviceCodes.delete(c.device_hash)
        return expired.length
      })
  })

  return { transactor, accounts, tokens, agents, events, deployments, conversations, files, traces, deviceCodes } as const
})

/** Every storage port, in memory, fresh for each build of the layer. */
export const layer: Layer.Layer<Ports.StoragePorts> = Layer.scopedContext(
  Effect.map(make, (ports) =>
    Context.make(Ports.Transactor, ports.transactor).pipe(
      Context.add(Ports.AccountStore, ports.accounts),
      Context.add(Ports.TokenStore, ports.tokens),
      Context.add(Ports.AgentStore, ports.agents),
      Context.add(Ports.EventLog, ports.events),
      Context.add(Ports.DeploymentStore, ports.deployments),
      Context.add(Ports.ConversationStore, ports.conversations),
      Context.add(Ports.FileStore, ports.files),
      Context.add(Ports.TraceStore, ports.traces),
      Context.add(Ports.DeviceCodeStore, ports.deviceCodes)
    ))
)
