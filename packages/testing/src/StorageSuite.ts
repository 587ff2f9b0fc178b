/**
 * The contract of the storage ports. Every storage adapter runs it with one
 * line: `StorageSuite.run("sqlite", layer)`. Each test makes its own data
 * (unique names), so the suite runs on a shared database.
 */
import { describe, expect, it } from "@effect/vitest"
import { Account, Agent, Conversation, Deployment, File, Ids, Ports, Secret, Trace } from "@hosting/core"
import { DateTime, Effect, Layer, Option, Redacted } from "effect"
import * as TraceQueries from "./TraceQueries.js"
import * as TraceStoreSuite from "./TraceStoreSuite.js"

/** What the suite needs: every storage port. */
export type StoragePorts = Ports.StoragePorts

let counter = 0
/** A name unique to this process and run, valid as a slug. */
export const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}-${Math.random().toString(36).slice(2, 6)}`

const at = (iso: string) => DateTime.unsafeMake(iso)

const newAccount = (now = at("2026-11-01T10:00:00.000Z")) =>
  Effect.gen(function*() {
    const store = yield* Ports.AccountStore
    const name = Ids.AccountName.make(uniqueName("acct"))
    return yield* store.ensure({ id: Ids.AccountId.make(uniqueName("id")), name, now })
  })

/** What a deployment store is given to keep. */
type DeploymentToKeep = Parameters<Ports.DeploymentStore["Type"]["upsert"]>[0]

/** A running deployment that `account` made of its own agent `helper` (build b-1) on 2026-11-01, in a namespace of its own. */
const deploymentOf = (account: Account.Account, extra: Partial<DeploymentToKeep> = {}): DeploymentToKeep => ({
  id: Deployment.DeploymentId.make(uniqueName("dep")),
  account_id: account.id,
  publisher_id: account.id,
  agent_name: Ids.AgentName.make("helper"),
  build_id: Ids.BuildId.make("b-1"),
  namespace: uniqueName("ns"),
  status: "running",
  deployed_at: at("2026-11-01T10:00:00.000Z"),
  undeployed_at: Option.none(),
  spec: {},
  ...extra
})

const newUser = Effect.gen(function*() {
  const store = yield* Ports.AccountStore
  const user = new Account.User({ id: Ids.UserId.make(uniqueName("user")), name: "Test User" })
  yield* store.upsertUser(user)
  return user
})

const newAgent = (account: Account.Account, now = at("2026-11-01T10:00:00.000Z")) =>
  Effect.gen(function*() {
    const store = yield* Ports.AgentStore
    return yield* store.upsertAgent({
      id: Ids.AgentId.make(uniqueName("agent-id")),
      account_id: account.id,
      name: Ids.AgentName.make(uniqueName("agent")),
      registry: "registry.example.com/team",
      now
    })
  })

const buildOf = (agent: Agent.AgentRecord, buildId: string, registeredAt: string) =>
  new Agent.Build({
    agent_id: agent.id,
    build_id: Ids.BuildId.make(buildId),
    spec: { name: agent.name, description: `build ${buildId}`, nested: { list: [1, "two", null] } },
    spec_content: `name: ${agent.name}\n`,
    readme: `# ${buildId}`,
    validation_warnings: [new Agent.ValidationWarning({ code: "unknown_key", path: "nested", message: "m" })],
    version: Option.none(),
    published_at: Option.none(),
    registered_at: at(registeredAt),
    updated_at: at(registeredAt)
  })

/** Runs the storage contract against a layer providing every storage port. */
export const run = <E>(name: string, layer: Layer.Layer<StoragePorts, E>) => {
  TraceStoreSuite.run(name, layer)
  describe(`storage contract: ${name}`, () => {
    it.layer(layer, { timeout: 30_000 })((it) => {
      describe("AccountStore", () => {
        it.effect("ensure creates an account once; a second ensure of the same name returns the first", () =>
          Effect.gen(function*() {
            const store = yield* Ports.AccountStore
            const name = Ids.AccountName.make(uniqueName("acct"))
            const first = yield* store.ensure({ id: Ids.AccountId.make(uniqueName("id")), name, now: at("2026-11-01T10:00:00.000Z") })
            const second = yield* store.ensure({ id: Ids.AccountId.make(uniqueName("id")), name, now: at("2026-11-02T10:00:00.000Z") })
            expect(second.id).toBe(first.id)
            expect(DateTime.formatIso(second.created_at)).toBe("2026-11-01T10:00:00.000Z")
            expect(Option.getOrThrow(yield* store.findByName(name)).id).toBe(first.id)
            expect(Option.getOrThrow(yield* store.findById(first.id)).name).toBe(name)
          }))

        it.effect("lookups of unknown accounts and users are None", () =>
          Effect.gen(function*() {
            const store = yield* Ports.AccountStore
            expect(Option.isNone(yield* store.findByName(Ids.AccountName.make(uniqueName("nobody"))))).toBe(true)
            expect(Option.isNone(yield* store.findById(Ids.AccountId.make(uniqueName("nobody"))))).toBe(true)
            expect(Option.isNone(yield* store.findUser(Ids.UserId.make(uniqueName("nobody"))))).toBe(true)
          }))

        it.effect("rename moves the name; a name taken by another account is refused and nothing changes", () =>
          Effect.gen(function*() {
            const store = yield* Ports.AccountStore
            const a = yield* newAccount()
            const b = yield* newAccount()
            const fresh = Ids.AccountName.make(uniqueName("renamed"))
            expect(yield* store.rename(a.id, fresh)).toBe(true)
            expect(Option.isNone(yield* store.findByName(a.name))).toBe(true)
            expect(Option.getOrThrow(yield* store.findByName(fresh)).id).toBe(a.id)
            expect(yield* store.rename(b.id, fresh)).toBe(false)
            expect(Option.getOrThrow(yield* store.findById(b.id)).name).toBe(b.name)
          }))

        it.effect("users upsert by id; memberships set and change roles", () =>
          Effect.gen(function*() {
            const store = yield* Ports.AccountStore
            const account = yield* newAccount()
            const user = yield* newUser
            yield* store.upsertUser(new Account.User({ id: user.id, name: "Renamed User" }))
            expect(Option.getOrThrow(yield* store.findUser(user.id)).name).toBe("Renamed User")
            yield* store.setMembership(account.id, user.id, "member")
            yield* store.setMembership(account.id, user.id, "admin")
            const memberships = yield* store.membershipsOf(user.id)
            expect(memberships.map((m) => [m.account, m.role])).toEqual([[account.name, "admin"]])
            const members = yield* store.membersOf(account.id)
            expect(members.map((m) => [m.user_id, m.name, m.role])).toEqual([[user.id, "Renamed User", "admin"]])
          }))

        it.effect("create makes a new account only: a taken name gives None and leaves the holder as it was", () =>
          Effect.gen(function*() {
            const store = yield* Ports.AccountStore
            const name = Ids.AccountName.make(uniqueName("created"))
            const id = Ids.AccountId.make(uniqueName("id"))
            const created = Option.getOrThrow(yield* store.create({ id, name, now: at("2026-11-03T10:00:00.000Z") }))
            expect([created.id, created.name, DateTime.formatIso(created.created_at)]).toEqual([id, name, "2026-11-03T10:00:00.000Z"])
            const again = yield* store.create({ id: Ids.AccountId.make(uniqueName("id")), name, now: at("2026-11-04T10:00:00.000Z") })
            expect(Option.isNone(again)).toBe(true)
            expect(Option.getOrThrow(yield* store.findByName(name)).id).toBe(id)
          }))

        it.effect("removeMembership ends one membership once; lockMembers holds within a transaction", () =>
          Effect.gen(function*() {
            const store = yield* Ports.AccountStore
            const tx = yield* Ports.Transactor
            const account = yield* newAccount()
            const [a, b] = [yield* newUser, yield* newUser]
            yield* store.setMembership(account.id, a.id, "owner")
            yield* store.setMembership(account.id, b.id, "member")
            const removed = yield* tx.withTransaction(Effect.zipRight(store.lockMembers(account.id), store.removeMembership(account.id, b.id)))
            expect(removed).toBe(true)
            expect(yield* store.removeMembership(account.id, b.id)).toBe(false)
            expect((yield* store.membersOf(account.id)).map((m) => m.user_id)).toEqual([a.id])
            expect(yield* store.membershipsOf(b.id)).toEqual([])
          }))
      })

      describe("TokenStore", () => {
        it.effect("finds a user by token hash with the expiry; adding the same hash twice is harmless; remove is once", () =>
          Effect.gen(function*() {
            const tokens = yield* Ports.TokenStore
            const user = yield* newUser
            const hash = uniqueName("hash")
            const expires = at("2027-01-01T00:00:00.000Z")
            yield* tokens.add({ hash, user_id: user.id, expires_at: Option.some(expires), parent_hash: Option.none(), now: at("2026-11-01T00:00:00.000Z") })
            yield* tokens.add({ hash, user_id: user.id, expires_at: Option.some(expires), parent_hash: Option.none(), now: at("2026-11-01T00:00:00.000Z") })
            const found = Option.getOrThrow(yield* tokens.findPrincipal(hash))
            expect(found.principal.user.id).toBe(user.id)
            expect(Option.map(found.expires_at, DateTime.formatIso)).toEqual(Option.some("2027-01-01T00:00:00.000Z"))
            expect(Option.isNone(yield* tokens.findPrincipal(uniqueName("other")))).toBe(true)
            expect(yield* tokens.remove(hash)).toBe(true)
            expect(Option.isNone(yield* tokens.findPrincipal(hash))).toBe(true)
            expect(yield* tokens.remove(hash)).toBe(false)
          }))

        it.effect("findPrincipal gives the token's user with their memberships, by account name", () =>
          Effect.gen(function*() {
            const tokens = yield* Ports.TokenStore
            const accounts = yield* Ports.AccountStore
            const user = yield* newUser
            // Names that differ only in their last letter sort alike in every collation.
            const base = uniqueName("acct")
            const named = (suffix: string) =>
              accounts.ensure({
                id: Ids.AccountId.make(uniqueName("id")),
                name: Ids.AccountName.make(`${base}-${suffix}`),
                now: at("2026-11-01T10:00:00.000Z")
              })
            const second = yield* named("b")
            const first = yield* named("a")
            yield* accounts.setMembership(second.id, user.id, "member")
            yield* accounts.setMembership(first.id, user.id, "owner")
            const hash = uniqueName("hash")
            yield* tokens.add({ hash, user_id: user.id, expires_at: Option.none(), parent_hash: Option.none(), now: at("2026-11-01T00:00:00.000Z") })
            const found = Option.getOrThrow(yield* tokens.findPrincipal(hash))
            expect([found.hash, Option.isNone(found.expires_at), found.principal.user.id, found.principal.user.name])
              .toEqual([hash, true, user.id, "Test User"])
            expect(found.principal.memberships.map((m) => [m.account_id, m.account, m.role]))
              .toEqual([[first.id, first.name, "owner"], [second.id, second.name, "member"]])
            const loner = yield* newUser
            const lonerHash = uniqueName("hash")
            yield* tokens.add({ hash: lonerHash, user_id: loner.id, expires_at: Option.none(), parent_hash: Option.none(), now: at("2026-11-01T00:00:00.000Z") })
            expect(Option.getOrThrow(yield* tokens.findPrincipal(lonerHash)).principal.memberships).toEqual([])
          }))
      })

      describe("TokenStore: personal access tokens and limits", () => {
        const none = { scopes: Option.none(), accounts: Option.none() }
        it.effect("a personal token keeps its id, name and limits; it is listed newest first, touched, and revoked by its user only", () =>
          Effect.gen(function*() {
            const tokens = yield* Ports.TokenStore
            const user = yield* newUser
            const other = yield* newUser
            const account = yield* newAccount()
            const older = uniqueName("hash")
            const newer = uniqueName("hash")
            const olderId = uniqueName("tok")
            const newerId = uniqueName("tok")
            yield* tokens.add({
              hash: older,
              user_id: user.id,
              expires_at: Option.none(),
              parent_hash: Option.none(),
              now: at("2026-11-01T00:00:00.000Z"),
              personal: { id: olderId, name: "laptop" },
              limits: none
            })
            yield* tokens.add({
              hash: newer,
              user_id: user.id,
              expires_at: Option.some(at("2026-12-01T00:00:00.000Z")),
              parent_hash: Option.none(),
              now: at("2026-11-02T00:00:00.000Z"),
              personal: { id: newerId, name: "ci" },
              limits: { scopes: Option.some(["read", "chat"]), accounts: Option.some([account.id]) }
            })
            // A token that is not personal is not listed.
            yield* tokens.add({ hash: uniqueName("hash"), user_id: user.id, expires_at: Option.none(), parent_hash: Option.none(), now: at("2026-11-03T00:00:00.000Z") })
            const found = Option.getOrThrow(yield* tokens.findPrincipal(newer))
            expect(found.limits).toEqual({ id: Option.some(newerId), scopes: Option.some(["read", "chat"]), accounts: Option.some([account.id]) })
            expect(Option.getOrThrow(yield* tokens.findPrincipal(older)).limits).toEqual({ id: Option.some(olderId), ...none })
            yield* tokens.touch(newer, at("2026-11-05T12:00:00.000Z"))
            const listed = yield* tokens.listPersonal(user.id)
            expect(listed.map((t) => [t.id, t.name, t.scopes, t.accounts, Option.map(t.last_used_at, DateTime.formatIso)])).toEqual([
              [newerId, "ci", Option.some(["read", "chat"]), Option.some([account.id]), Option.some("2026-11-05T12:00:00.000Z")],
              [olderId, "laptop", Option.none(), Option.none(), Option.none()]
            ])
            expect(DateTime.formatIso(listed[0]!.created_at)).toBe("2026-11-02T00:00:00.000Z")
            expect(Option.map(listed[0]!.expires_at, DateTime.formatIso)).toEqual(Option.some("2026-12-01T00:00:00.000Z"))
            expect(yield* tokens.listPersonal(other.id)).toEqual([])
            expect(Option.isNone(yield* tokens.removePersonal(other.id, newerId))).toBe(true)
            expect(yield* tokens.removePersonal(user.id, newerId)).toEqual(Option.some({ name: "ci", accounts: Option.some([account.id]) }))
            expect(Option.isNone(yield* tokens.removePersonal(user.id, newerId))).toBe(true)
            expect(Option.isNone(yield* tokens.findPrincipal(newer))).toBe(true)
            expect((yield* tokens.listPersonal(user.id)).map((t) => t.id)).toEqual([olderId])
          }))

        it.effect("a token made from a limited one has its limits unless given its own; an empty scope list stays empty", () =>
          Effect.gen(function*() {
            const tokens = yield* Ports.TokenStore
            const user = yield* newUser
            const account = yield* newAccount()
            const parent = uniqueName("hash")
            const add = (hash: string, parentHash: string | undefined, limits?: Parameters<typeof tokens.add>[0]["limits"]) =>
              tokens.add({ hash, user_id: user.id, expires_at: Option.none(), parent_hash: Option.fromNullable(parentHash), now: at("2026-11-01T00:00:00.000Z"), limits })
            yield* add(parent, undefined, { scopes: Option.some(["read"]), accounts: Option.some([account.id]) })
            const inherits = uniqueName("hash")
            const own = uniqueName("hash")
            const empty = uniqueName("hash")
            expect(yield* add(inherits, parent)).toBe(true)
            expect(yield* add(own, parent, { scopes: Option.some(["chat"]), accounts: Option.none() })).toBe(true)
            expect(yield* add(empty, undefined, { scopes: Option.some([]), accounts: Option.none() })).toBe(true)
            const limitsOf = (hash: string) => Effect.map(tokens.findPrincipal(hash), (found) => Option.getOrThrow(found).limits)
            expect(yield* limitsOf(inherits)).toEqual({ id: Option.none(), scopes: Option.some(["read"]), accounts: Option.some([account.id]) })
            expect(yield* limitsOf(own)).toEqual({ id: Option.none(), scopes: Option.some(["chat"]), accounts: Option.none() })
            expect(yield* limitsOf(empty)).toEqual({ id: Option.none(), scopes: Option.some([]), accounts: Option.none() })
          }))
      })

      describe("AccountStore: the first user and setup codes", () => {
        it.effect("hasUsers sees a user; addUser makes one; a setup code is spent once and takes every other code with it", () =>
          Effect.gen(function*() {
            const accounts = yield* Ports.AccountStore
            const tx = yield* Ports.Transactor
            const id = Ids.UserId.make(uniqueName("admin"))
            yield* accounts.addUser({ id, name: "The Admin", instance_admin: true, now: at("2026-11-01T00:00:00.000Z") })
            expect(yield* accounts.hasUsers).toBe(true)
            expect(Option.map(yield* accounts.findUser(id), (u) => u.name)).toEqual(Option.some("The Admin"))
            const mine = uniqueName("code")
            const theirs = uniqueName("code")
            yield* accounts.addSetupCode({ hash: mine, now: at("2026-11-01T00:00:00.000Z") })
            yield* accounts.addSetupCode({ hash: theirs, now: at("2026-11-01T00:00:01.000Z") })
            expect(yield* accounts.spendSetupCode(uniqueName("code"))).toBe(false)
            expect(yield* tx.withTransaction(accounts.spendSetupCode(mine))).toBe(true)
            expect(yield* accounts.spendSetupCode(mine)).toBe(false)
            expect(yield* accounts.spendSetupCode(theirs)).toBe(false)
          }))
      })

      describe("AccountStore: the audit log", () => {
        it.effect("entries are kept per account, read newest first in pages, with the count of all", () =>
          Effect.gen(function*() {
            const accounts = yield* Ports.AccountStore
            const account = yield* newAccount()
            const other = yield* newAccount()
            const user = yield* newUser
            const entry = (n: number, account_id = account.id) => ({
              account_id,
              at: at(`2026-11-01T00:00:0${n}.000Z`),
              actor: user.id,
              action: "member.added" as const,
              target: `user-${n}`,
              details: `Added user-${n}.`
            })
            yield* accounts.recordAudit([entry(1), entry(2)])
            yield* accounts.recordAudit([entry(3), entry(4, other.id)])
            yield* accounts.recordAudit([])
            const first = yield* accounts.auditOf(account.id, { limit: 2, offset: 0 })
            expect(first.total).toBe(3)
            expect(first.entries.map((e) => [e.target, e.details, DateTime.formatIso(e.at), e.actor, e.action])).toEqual([
              ["user-3", "Added user-3.", "2026-11-01T00:00:03.000Z", user.id, "member.added"],
              ["user-2", "Added user-2.", "2026-11-01T00:00:02.000Z", user.id, "member.added"]
            ])
            expect(first.entries[0]!.id).toBeGreaterThan(first.entries[1]!.id)
            expect((yield* accounts.auditOf(account.id, { limit: 2, offset: 2 })).entries.map((e) => e.target)).toEqual(["user-1"])
            expect((yield* accounts.auditOf(other.id, { limit: 10, offset: 0 })).entries.map((e) => e.target)).toEqual(["user-4"])
          }))
      })

      describe("AccountStore: secrets", () => {
        it.effect("a secret is set, replaced and deleted per account; listed by name with its times, its value read only by name", () =>
          Effect.gen(function*() {
            const accounts = yield* Ports.AccountStore
            const account = yield* newAccount()
            const other = yield* newAccount()
            const name = (text: string) => Secret.SecretName.make(text)
            const put = (account_id: Ids.AccountId, secret: string, value: string, iso: string) =>
              accounts.putSecret({ account_id, name: name(secret), value: Redacted.make(value), now: at(iso) })
            expect(yield* put(account.id, "API_KEY", "first\nline two ✓", "2026-11-01T10:00:00.000Z")).toEqual({ created: true })
            expect(yield* put(account.id, "API_KEY", "second", "2026-11-02T10:00:00.000Z")).toEqual({ created: false })
            yield* put(account.id, "A_TOKEN", "a", "2026-11-03T10:00:00.000Z")
            yield* put(other.id, "API_KEY", "theirs", "2026-11-04T10:00:00.000Z")
            const listed = yield* accounts.secretsOf(account.id)
            expect(listed.map((s) => [s.name, DateTime.formatIso(s.created_at), DateTime.formatIso(s.updated_at)])).toEqual([
              ["API_KEY", "2026-11-01T10:00:00.000Z", "2026-11-02T10:00:00.000Z"],
              ["A_TOKEN", "2026-11-03T10:00:00.000Z", "2026-11-03T10:00:00.000Z"]
            ])
            const values = yield* accounts.secretValues(account.id, [name("API_KEY"), name("MISSING")])
            expect([...values].map(([k, v]) => [k, Redacted.value(v)])).toEqual([["API_KEY", "second"]])
            expect((yield* accounts.secretValues(account.id, [])).size).toBe(0)
            expect(yield* accounts.removeSecret(account.id, name("API_KEY"))).toBe(true)
            expect(yield* accounts.removeSecret(account.id, name("API_KEY"))).toBe(false)
            expect((yield* accounts.secretsOf(account.id)).map((s) => s.name)).toEqual(["A_TOKEN"])
            expect([...(yield* accounts.secretValues(other.id, [name("API_KEY")])).values()].map(Redacted.value)).toEqual(["theirs"])
            expect(Option.isSome(yield* accounts.deleteAccount(other.id))).toBe(true)
            expect(yield* accounts.secretsOf(other.id)).toEqual([])
          }))
      })

      describe("AccountStore: identities at OpenID providers", () => {
        it.effect("an identity is linked to one user, once; the same subject at another issuer is another identity", () =>
          Effect.gen(function*() {
            const accounts = yield* Ports.AccountStore
            const user = yield* newUser
            const other = yield* newUser
            const subject = uniqueName("sub")
            const link = (issuer: string, user_id: Ids.UserId) =>
              accounts.linkIdentity({ issuer, subject, user_id, email: Option.some("a@example.com"), now: at("2026-11-01T00:00:00.000Z") })
            expect(Option.isNone(yield* accounts.findIdentity("https://idp.example", subject))).toBe(true)
            expect(yield* link("https://idp.example", user.id)).toBe(true)
            expect(yield* link("https://idp.example", other.id)).toBe(false)
            expect(yield* accounts.findIdentity("https://idp.example", subject)).toEqual(Option.some(user.id))
            expect(yield* link("https://other.example", other.id)).toBe(true)
            expect(yield* accounts.findIdentity("https://other.example", subject)).toEqual(Option.some(other.id))
          }))
      })

      describe("AccountStore: invitations", () => {
        it.effect("listed while they wait, newest first; taken once by their code; an expired one is neither listed nor taken; withdrawn by id", () =>
          Effect.gen(function*() {
            const accounts = yield* Ports.AccountStore
            const account = yield* newAccount()
            const other = yield* newAccount()
            const user = yield* newUser
            const invitation = (id: string, created: string, expires: string, email?: string): Ports.Invitation => ({
              id,
              account_id: account.id,
              code_hash: uniqueName("code"),
              email: Option.fromNullable(email),
              role: "member",
              created_by: user.id,
              created_at: at(created),
              expires_at: at(expires)
            })
            const older = invitation(uniqueName("inv"), "2026-11-01T00:00:00.000Z", "2026-11-08T00:00:00.000Z", "a@example.com")
            const newer = invitation(uniqueName("inv"), "2026-11-02T00:00:00.000Z", "2026-11-09T00:00:00.000Z")
            const stale = invitation(uniqueName("inv"), "2026-10-01T00:00:00.000Z", "2026-10-08T00:00:00.000Z")
            for (const i of [older, newer, stale]) yield* accounts.addInvitation(i)
            const now = at("2026-11-03T00:00:00.000Z")
            expect((yield* accounts.invitationsOf(account.id, now)).map((i) => i.id)).toEqual([newer.id, older.id])
            expect(yield* accounts.invitationsOf(other.id, now)).toEqual([])
            const listed = (yield* accounts.invitationsOf(account.id, now))[1]!
            expect([listed.email, listed.role, listed.created_by, DateTime.formatIso(listed.expires_at)])
              .toEqual([Option.some("a@example.com"), "member", user.id, "2026-11-08T00:00:00.000Z"])
            expect(Option.isNone(yield* accounts.takeInvitation(stale.code_hash, now))).toBe(true)
            expect(Option.map(yield* accounts.takeInvitation(older.code_hash, now), (i) => i.id)).toEqual(Option.some(older.id))
            expect(Option.isNone(yield* accounts.takeInvitation(older.code_hash, now))).toBe(true)
            expect(yield* accounts.removeInvitation(other.id, newer.id)).toBe(false)
            expect(yield* accounts.removeInvitation(account.id, newer.id)).toBe(true)
            expect(yield* accounts.removeInvitation(account.id, newer.id)).toBe(false)
            expect(yield* accounts.invitationsOf(account.id, now)).toEqual([])
          }))
      })

      describe("TokenStore: tokens made from tokens", () => {
        const add = (hash: string, user: Account.User, parent?: string) =>
          Effect.flatMap(Ports.TokenStore, (tokens) =>
            tokens.add({
              hash,
              user_id: user.id,
              expires_at: Option.none(),
              parent_hash: Option.fromNullable(parent),
              now: at("2026-11-01T00:00:00.000Z")
            }))
        const stored = (hash: string) => Effect.map(Effect.flatMap(Ports.TokenStore, (tokens) => tokens.findPrincipal(hash)), Option.isSome)

        it.effect("removing a token removes what was made from it, transitively, and the device logins decided with any of them", () =>
          Effect.gen(function*() {
            const tokens = yield* Ports.TokenStore
            const codes = yield* Ports.DeviceCodeStore
            const user = yield* newUser
            const [root, session, device, deviceSession, sibling] = ["root", "session", "device", "device-session", "sibling"].map(uniqueName)
            expect(yield* add(root!, user)).toBe(true)
            expect(yield* add(session!, user, root)).toBe(true)
            expect(yield* add(device!, user, session)).toBe(true)
            expect(yield* add(deviceSession!, user, device)).toBe(true)
            expect(yield* add(sibling!, user)).toBe(true)
            const pending = {
              device_hash: uniqueName("device"),
              user_code: uniqueName("UC").toUpperCase(),
              client_id: "hosting-cli",
              scope: "",
              status: "pending" as const,
              user_id: Option.none(),
              decided_by: Option.none(),
              interval: 5,
              last_polled_at: Option.none(),
              expires_at: at("2099-01-01T00:00:00.000Z"),
              created_at: at("2026-11-01T10:00:00.000Z")
            }
            yield* codes.insert(pending)
            expect(yield* codes.decide(pending.user_code, "approved", user.id, session!)).toBe(true)
            expect(yield* tokens.remove(root!)).toBe(true)
            for (const hash of [root!, session!, device!, deviceSession!]) expect([hash, yield* stored(hash)]).toEqual([hash, false])
            expect(yield* stored(sibling!)).toBe(true)
            expect(Option.isNone(yield* codes.findByDeviceHash(pending.device_hash))).toBe(true)
          }))

        it.effect("a token is not stored when the one it is made from is gone; removing a child leaves its parent", () =>
          Effect.gen(function*() {
            const tokens = yield* Ports.TokenStore
            const user = yield* newUser
            const [parent, child, orphan] = ["parent", "child", "orphan"].map(uniqueName)
            expect(yield* add(orphan!, user, uniqueName("revoked"))).toBe(false)
            expect(yield* stored(orphan!)).toBe(false)
            yield* add(parent!, user)
            yield* add(child!, user, parent)
            // Adding a stored token again is harmless and says it is stored.
            expect(yield* add(child!, user, parent)).toBe(true)
            expect(yield* tokens.remove(child!)).toBe(true)
            expect([yield* stored(parent!), yield* stored(child!)]).toEqual([true, false])
          }))
      })

      describe("DeviceCodeStore", () => {
        const code = (userCode: string, expiresAt: string): Ports.DeviceCodeRecord => ({
          device_hash: uniqueName("device"),
          user_code: userCode,
          client_id: "hosting-cli",
          scope: "",
          status: "pending",
          user_id: Option.none(),
          decided_by: Option.none(),
          interval: 5,
          last_polled_at: Option.none(),
          expires_at: at(expiresAt),
          created_at: at("2026-11-01T10:00:00.000Z")
        })

        it.effect("codes read back by user code and by hash; a decision lands once; polls record the interval; remove is once", () =>
          Effect.gen(function*() {
            const codes = yield* Ports.DeviceCodeStore
            const tokens = yield* Ports.TokenStore
            const user = yield* newUser
            const record = code(uniqueName("UC").toUpperCase(), "2026-11-01T10:10:00.000Z")
            yield* codes.insert(record)
            expect(Option.getOrThrow(yield* codes.findByUserCode(record.user_code))).toEqual(record)
            expect(Option.getOrThrow(yield* codes.findByDeviceHash(record.device_hash)).user_code).toBe(record.user_code)
            const session = uniqueName("session")
            yield* tokens.add({ hash: session, user_id: user.id, expires_at: Option.none(), parent_hash: Option.none(), now: at("2026-11-01T00:00:00.000Z") })
            expect(yield* codes.decide(record.user_code, "approved", user.id, session)).toBe(true)
            expect(yield* codes.decide(record.user_code, "denied", user.id, session)).toBe(false)
            yield* codes.recordPoll(record.device_hash, at("2026-11-01T10:01:00.000Z"), 10)
            const polled = Option.getOrThrow(yield* codes.findByDeviceHash(record.device_hash))
            expect([polled.status, polled.user_id, polled.decided_by, polled.interval, Option.map(polled.last_polled_at, DateTime.formatIso)])
              .toEqual(["approved", Option.some(user.id), Option.some(session), 10, Option.some("2026-11-01T10:01:00.000Z")])
            expect(yield* codes.remove(record.device_hash)).toBe(true)
            expect(yield* codes.remove(record.device_hash)).toBe(false)
            expect(Option.isNone(yield* codes.findByUserCode(record.user_code))).toBe(true)
          }))

        it.effect("pruneExpired removes only the codes that expired before the time", () =>
          Effect.gen(function*() {
            const codes = yield* Ports.DeviceCodeStore
            const old = code(uniqueName("OLD").toUpperCase(), "2020-01-01T00:00:00.000Z")
            const fresh = code(uniqueName("NEW").toUpperCase(), "2099-01-01T00:00:00.000Z")
            yield* codes.insert(old)
            yield* codes.insert(fresh)
            expect(yield* codes.pruneExpired(at("2026-11-01T00:00:00.000Z"))).toBeGreaterThanOrEqual(1)
            expect(Option.isNone(yield* codes.findByDeviceHash(old.device_hash))).toBe(true)
            expect(Option.isSome(yield* codes.findByDeviceHash(fresh.device_hash))).toBe(true)
          }))
      })

      describe("AgentStore", () => {
        it.effect("upsertAgent creates once and then updates the registry, keeping the id", () =>
          Effect.gen(function*() {
            const agents = yield* Ports.AgentStore
            const account = yield* newAccount()
            const first = yield* newAgent(account)
            const again = yield* agents.upsertAgent({
              id: Ids.AgentId.make(uniqueName("other-id")),
              account_id: account.id,
              name: first.name,
              registry: "ghcr.io/other",
              now: at("2026-11-03T00:00:00.000Z")
            })
            expect(again.id).toBe(first.id)
            expect(again.registry).toBe("ghcr.io/other")
            expect(again.account).toBe(account.name)
            expect(Option.getOrThrow(yield* agents.findAgent(account.id, first.name)).registry).toBe("ghcr.io/other")
          }))

        it.effect("builds round-trip every field; listBuilds is newest registration first", () =>
          Effect.gen(function*() {
            const agents = yield* Ports.AgentStore
            const agent = yield* newAgent(yield* newAccount())
            const old = buildOf(agent, "b-old", "2026-11-01T10:00:00.000Z")
            const recent = buildOf(agent, "b-new", "2026-11-02T10:00:00.000Z")
            yield* agents.upsertBuild(old)
            yield* agents.upsertBuild(recent)
            const found = Option.getOrThrow(yield* agents.findBuild(agent.id, old.build_id))
            expect(found.spec).toEqual(old.spec)
            expect(found.readme).toBe("# b-old")
            expect(found.spec_content).toBe(old.spec_content)
            expect(found.validation_warnings.map((w) => w.code)).toEqual(["unknown_key"])
            expect(Option.isNone(found.version)).toBe(true)
            expect((yield* agents.listBuilds(agent.id)).map((b) => b.build_id)).toEqual(["b-new", "b-old"])
          }))

        it.effect("upsertBuild replaces content but keeps version, publication and registration time", () =>
          Effect.gen(function*() {
            const agents = yield* Ports.AgentStore
            const agent = yield* newAgent(yield* newAccount())
            const build = buildOf(agent, "b-1", "2026-11-01T10:00:00.000Z")
            yield* agents.upsertBuild(build)
            yield* agents.publishBuild({
              agent_id: agent.id,
              build_id: build.build_id,
              version: Ids.SemVer.make("1.0.0"),
              now: at("2026-11-01T11:00:00.000Z")
            })
            yield* agents.upsertBuild(new Agent.Build({
              ...build,
              readme: "updated",
              registered_at: at("2026-11-05T00:00:00.000Z"),
              updated_at: at("2026-11-05T00:00:00.000Z")
            }))
            const found = Option.getOrThrow(yield* agents.findBuild(agent.id, build.build_id))
            expect(found.readme).toBe("updated")
            expect(found.version).toEqual(Option.some("1.0.0"))
            expect(Option.map(found.published_at, DateTime.formatIso)).toEqual(Option.some("2026-11-01T11:00:00.000Z"))
            expect(DateTime.formatIso(found.registered_at)).toBe("2026-11-01T10:00:00.000Z")
            expect(Option.getOrThrow(yield* agents.findBuildByVersion(agent.id, Ids.SemVer.make("1.0.0"))).build_id).toBe("b-1")
            expect(Option.isNone(yield* agents.findBuildByVersion(agent.id, Ids.SemVer.make("2.0.0")))).toBe(true)
          }))

        it.effect("listPublished shows only agents with a published version, highest semver as latest, searchable and paged", () =>
          Effect.gen(function*() {
            const agents = yield* Ports.AgentStore
            const account = yield* newAccount()
            const published = yield* newAgent(account)
            const hidden = yield* newAgent(account)
            for (const [id, version, time] of [["p-1", "1.10.0", "2026-11-01T10:00:00.000Z"], ["p-2", "1.9.0", "2026-11-02T10:00:00.000Z"]] as const) {
              yield* agents.upsertBuild(buildOf(published, id, time))
              yield* agents.publishBuild({ agent_id: published.id, build_id: Ids.BuildId.make(id), version: Ids.SemVer.make(version), now: at(time) })
            }
            yield* agents.upsertBuild(buildOf(hidden, "h-1", "2026-11-01T10:00:00.000Z"))
            const byAccount = yield* agents.listPublished({ q: Option.some(account.name), limit: 50, offset: 0 })
            expect(byAccount.total).toBe(1)
            expect(byAccount.agents.map((a) => [a.name, a.latest_version, a.latest_build_id, a.versions_count])).toEqual([
              [published.name, "1.10.0", "p-1", 2]
            ])
            expect(byAccount.agents[0]!.description).toBe("build p-1")
            expect(DateTime.formatIso(byAccount.agents[0]!.published_at)).toBe("2026-11-02T10:00:00.000Z")
            const none = yield* agents.listPublished({ q: Option.some(`${account.name}%_`), limit: 50, offset: 0 })
            expect(none.total).toBe(0)
            const paged = yield* agents.listPublished({ q: Option.some(account.name), limit: 50, offset: 1 })
            expect(paged.total).toBe(1)
            expect(paged.agents).toEqual([])
            // Agents come newest publication first; registering a published build again, with its version and
            // publication as a registration carries them, moves nothing.
            const later = yield* newAgent(account)
            yield* agents.upsertBuild(buildOf(later, "l-1", "2026-11-03T10:00:00.000Z"))
            yield* agents.publishBuild({ agent_id: later.id, build_id: Ids.BuildId.make("l-1"), version: Ids.SemVer.make("0.1.0"), now: at("2026-11-03T10:00:00.000Z") })
            yield* agents.upsertBuild(
              new Agent.Build({
                ...buildOf(published, "p-1", "2026-11-01T10:00:00.000Z"),
                version: Option.some(Ids.SemVer.make("1.10.0")),
                published_at: Option.some(at("2026-11-01T10:00:00.000Z")),
                updated_at: at("2026-11-04T10:00:00.000Z")
              })
            )
            const both = yield* agents.listPublished({ q: Option.some(account.name), limit: 50, offset: 0 })
            expect(both.total).toBe(2)
            expect(both.agents.map((a) => [a.name, DateTime.formatIso(a.published_at), a.versions_count])).toEqual([
              [later.name, "2026-11-03T10:00:00.000Z", 1],
              [published.name, "2026-11-02T10:00:00.000Z", 2]
            ])
          }))
      })

      describe("AgentStore: yanks and channels (issue 28)", () => {
        it.effect("a yank keeps its reason and time and is undone; an upsert of the build keeps it; listPublished's latest passes a yanked version by", () =>
          Effect.gen(function*() {
            const agents = yield* Ports.AgentStore
            const agent = yield* newAgent(yield* newAccount())
            for (const [id, version, time] of [["b-1", "1.0.0", "2026-11-01T10:00:00.000Z"], ["b-2", "1.1.0", "2026-11-02T10:00:00.000Z"]] as const) {
              yield* agents.upsertBuild(buildOf(agent, id, time))
              yield* agents.publishBuild({ agent_id: agent.id, build_id: Ids.BuildId.make(id), version: Ids.SemVer.make(version), now: at(time) })
            }
            const b2 = Ids.BuildId.make("b-2")
            yield* agents.yankBuild({ agent_id: agent.id, build_id: b2, reason: Option.some("broken"), now: at("2026-11-03T10:00:00.000Z") })
            yield* agents.upsertBuild(new Agent.Build({ ...buildOf(agent, "b-2", "2026-11-02T10:00:00.000Z"), readme: "again" }))
            const yanked = Option.getOrThrow(yield* agents.findBuild(agent.id, b2))
            expect([yanked.yanked?.reason, yanked.yanked && DateTime.formatIso(yanked.yanked.yanked_at), yanked.readme]).toEqual([
              "broken",
              "2026-11-03T10:00:00.000Z",
              "again"
            ])
            expect((yield* agents.listBuilds(agent.id)).find((b) => b.build_id === b2)?.yanked?.reason).toBe("broken")
            const listed = yield* agents.listPublished({ q: Option.some(`${agent.account}/${agent.name}`), limit: 5, offset: 0 })
            expect(listed.agents.map((a) => [a.latest_version, a.versions_count])).toEqual([["1.0.0", 2]])
            yield* agents.yankBuild({ agent_id: agent.id, build_id: b2, reason: Option.none(), now: at("2026-11-04T10:00:00.000Z") })
            expect(Option.getOrThrow(yield* agents.findBuildByVersion(agent.id, Ids.SemVer.make("1.1.0"))).yanked).toBeUndefined()
          }))

        it.effect("channels are set, moved, listed by name and removed once", () =>
          Effect.gen(function*() {
            const agents = yield* Ports.AgentStore
            const agent = yield* newAgent(yield* newAccount())
            const channel = (name: string, version: string, time: string) => ({
              agent_id: agent.id,
              name: Ids.ChannelName.make(name),
              version: Ids.SemVer.make(version),
              updated_at: at(time)
            })
            yield* agents.setChannel(channel("stable", "1.0.0", "2026-11-01T10:00:00.000Z"))
            yield* agents.setChannel(channel("beta", "1.1.0", "2026-11-01T11:00:00.000Z"))
            yield* agents.setChannel(channel("stable", "1.1.0", "2026-11-02T10:00:00.000Z"))
            const listed = yield* agents.listChannels(agent.id)
            expect(listed.map((c) => [c.name, c.version, DateTime.formatIso(c.updated_at)])).toEqual([
              ["beta", "1.1.0", "2026-11-01T11:00:00.000Z"],
              ["stable", "1.1.0", "2026-11-02T10:00:00.000Z"]
            ])
            expect(yield* agents.removeChannel(agent.id, Ids.ChannelName.make("beta"))).toBe(true)
            expect(yield* agents.removeChannel(agent.id, Ids.ChannelName.make("beta"))).toBe(false)
            expect((yield* agents.listChannels(agent.id)).map((c) => c.name)).toEqual(["stable"])
            expect(yield* agents.listChannels((yield* newAgent(yield* newAccount())).id)).toEqual([])
          }))
      })

      describe("DeploymentStore", () => {
        it.effect("a deployment's follow and rolled_forward_from round-trip; listFollowing and liveOfBuild give live ones, oldest first", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const publisher = yield* newAccount()
            const deployer = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            const make = (account: Account.Account, day: string, build: string, extra: Partial<Parameters<Ports.DeploymentStore["Type"]["upsert"]>[0]> = {}) => ({
              id: Deployment.DeploymentId.make(uniqueName("dep")),
              account_id: account.id,
              publisher_id: publisher.id,
              agent_name: agentName,
              build_id: Ids.BuildId.make(build),
              namespace: uniqueName("ns"),
              status: "running",
              deployed_at: at(`2026-11-${day}T10:00:00.000Z`),
              undeployed_at: Option.none(),
              spec: {},
              ...extra
            })
            const pinned = make(publisher, "01", "b-1")
            const byRange = make(deployer, "02", "b-1", { follow: { range: Ids.VersionRange.make("^1") } })
            const byChannel = make(publisher, "03", "b-2", { follow: { channel: Ids.ChannelName.make("stable") }, rolled_forward_from: pinned.id })
            const ended = make(deployer, "04", "b-1", { follow: { range: Ids.VersionRange.make("^1") }, undeployed_at: Option.some(at("2026-11-05T10:00:00.000Z")) })
            for (const d of [pinned, byRange, byChannel, ended]) yield* deployments.upsert(d)
            const found = Option.getOrThrow(yield* deployments.findById(byChannel.id))
            expect([found.follow, found.rolled_forward_from]).toEqual([{ channel: "stable" }, pinned.id])
            expect(Option.getOrThrow(yield* deployments.findById(pinned.id)).follow).toBeUndefined()
            expect((yield* deployments.listFollowing(publisher.id, agentName)).map((d) => d.id)).toEqual([byRange.id, byChannel.id])
            expect((yield* deployments.liveOfBuild(publisher.id, agentName, Ids.BuildId.make("b-1"))).map((d) => d.id)).toEqual([
              pinned.id,
              byRange.id
            ])
          }))

        it.effect("setStatus writes a live deployment's status, reason and message only from the status given; listLiveWithStatus walks live ones by id", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const account = yield* newAccount()
            // Statuses of this test alone, so that other tests' deployments stay out of its lists.
            const pending = uniqueName("pending")
            const progressing = uniqueName("progressing")
            const make = (status: string, extra: Partial<DeploymentToKeep> = {}) => deploymentOf(account, { status, ...extra })
            const first = make(pending)
            const second = make(progressing)
            const third = make(pending)
            const ended = make(pending, { undeployed_at: Option.some(at("2026-11-02T10:00:00.000Z")) })
            for (const d of [first, second, third, ended]) yield* deployments.upsert(d)
            const ids = [first.id, second.id, third.id].sort()
            const list = (after: Deployment.DeploymentId | undefined, limit: number) =>
              Effect.map(deployments.listLiveWithStatus([pending, progressing], after, limit), (found) => found.map((d) => d.id))
            expect(yield* list(undefined, 10)).toEqual(ids)
            expect(yield* list(undefined, 2)).toEqual(ids.slice(0, 2))
            expect(yield* list(ids[1], 2)).toEqual(ids.slice(2))
            expect(yield* deployments.listLiveWithStatus([], undefined, 10)).toEqual([])

            const failed = { status: "failed", status_reason: "ImagePullBackOff", status_message: 'Back-off pulling image "x"' }
            expect(yield* deployments.setStatus(first.id, pending, failed)).toBe(true)
            const read = Option.getOrThrow(yield* deployments.findById(first.id))
            expect([read.status, read.status_reason, read.status_message]).toEqual(["failed", "ImagePullBackOff", 'Back-off pulling image "x"'])
            // From a status it no longer has: another process wrote first.
            expect(yield* deployments.setStatus(first.id, pending, { status: "available" })).toBe(false)
            expect(Option.getOrThrow(yield* deployments.findById(first.id)).status).toBe("failed")
            expect(yield* deployments.setStatus(first.id, "failed", { status: "available" })).toBe(true)
            const cleared = Option.getOrThrow(yield* deployments.findById(first.id))
            expect([cleared.status, cleared.status_reason, cleared.status_message]).toEqual(["available", undefined, undefined])
            expect(yield* deployments.setStatus(ended.id, pending, { status: "available" })).toBe(false)
            expect(yield* deployments.setStatus(Deployment.DeploymentId.make(uniqueName("dep")), pending, { status: "available" })).toBe(false)
            expect(yield* list(undefined, 10)).toEqual([second.id, third.id].sort())
            // Ending a deployment drops the reason of its status.
            yield* deployments.setStatus(second.id, progressing, failed)
            yield* deployments.markUndeployed(second.id, "superseded", at("2026-11-03T10:00:00.000Z"))
            const superseded = Option.getOrThrow(yield* deployments.findById(second.id))
            expect([superseded.status, superseded.status_reason, superseded.status_message]).toEqual(["superseded", undefined, undefined])
          }))

        it.effect("upsert stores a record by id and replaces it; accountsDeploying lists other accounts with live deployments", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const publisher = yield* newAccount()
            const deployer = yield* newAccount()
            const gone = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            const base = {
              publisher_id: publisher.id,
              agent_name: agentName,
              build_id: Ids.BuildId.make("b-1"),
              namespace: "ns",
              status: "running",
              deployed_at: at("2026-11-01T10:00:00.000Z"),
              undeployed_at: Option.none(),
              spec: { replicas: 1 }
            }
            const id = Deployment.DeploymentId.make(uniqueName("dep"))
            yield* deployments.upsert({ ...base, id, account_id: deployer.id, status: "pending" })
            yield* deployments.upsert({ ...base, id, account_id: deployer.id })
            yield* deployments.upsert({ ...base, id: Deployment.DeploymentId.make(uniqueName("dep")), account_id: publisher.id })
            yield* deployments.upsert({
              ...base,
              id: Deployment.DeploymentId.make(uniqueName("dep")),
              account_id: gone.id,
              undeployed_at: Option.some(at("2026-11-02T10:00:00.000Z"))
            })
            const found = Option.getOrThrow(yield* deployments.findById(id))
            expect([found.status, found.account, found.publisher, found.agent_name, found.spec, found.env]).toEqual([
              "running",
              deployer.name,
              publisher.name,
              agentName,
              { replicas: 1 },
              undefined
            ])
            // The env a deploy set over the spec's: plain values and secret references.
            const env = { MODE: "fast", API_KEY: { secret: Secret.SecretName.make("OPENAI_KEY") } }
            const withEnv = Deployment.DeploymentId.make(uniqueName("dep"))
            yield* deployments.upsert({ ...base, id: withEnv, account_id: deployer.id, undeployed_at: Option.some(at("2026-11-01T11:00:00.000Z")), env })
            expect(Option.getOrThrow(yield* deployments.findById(withEnv)).env).toEqual(env)
            expect(yield* deployments.accountsDeploying(publisher.id, agentName)).toEqual([deployer.id])
            expect(yield* deployments.accountsDeploying(publisher.id, Ids.AgentName.make(uniqueName("other")))).toEqual([])
          }))

        it.effect("settings (issue 28): a new record has none or the given ones; updateSettings sets them; a replaced record keeps them", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const account = yield* newAccount()
            const record = deploymentOf(account)
            yield* deployments.upsert(record)
            expect(Option.getOrThrow(yield* deployments.findById(record.id)).concurrent_send).toBeUndefined()
            yield* deployments.updateSettings(record.id, { concurrent_send: "queue" })
            expect(Option.getOrThrow(yield* deployments.findById(record.id)).concurrent_send).toBe("queue")
            yield* deployments.upsert({ ...record, status: "superseded" })
            const replaced = Option.getOrThrow(yield* deployments.findById(record.id))
            expect([replaced.status, replaced.concurrent_send]).toEqual(["superseded", "queue"])
            const withSettings = { ...record, id: Deployment.DeploymentId.make(uniqueName("dep")), concurrent_send: "reject" as const }
            yield* deployments.upsert(withSettings)
            expect(Option.getOrThrow(yield* deployments.findById(withSettings.id)).concurrent_send).toBe("reject")
            // Nothing to set: no record, no failure.
            yield* deployments.updateSettings(Deployment.DeploymentId.make(uniqueName("dep")), { concurrent_send: "reject" })
          }))

        it.effect("listForAgent gives the deployments made by the given accounts, most recent first; markUndeployed ends one", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const publisher = yield* newAccount()
            const other = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            const namespace = uniqueName("ns")
            const make = (account: Account.Account, day: string) =>
              deploymentOf(account, {
                publisher_id: publisher.id,
                agent_name: agentName,
                namespace: account === publisher ? namespace : uniqueName("ns"),
                deployed_at: at(`2026-11-${day}T10:00:00.000Z`)
              })
            const first = make(publisher, "01")
            const second = make(publisher, "02")
            const elsewhere = make(other, "03")
            for (const d of [first, second, elsewhere]) yield* deployments.upsert(d)
            const own = yield* deployments.listForAgent(publisher.id, agentName, [publisher.id])
            expect(own.map((d) => d.id)).toEqual([second.id, first.id])
            const both = yield* deployments.listForAgent(publisher.id, agentName, [publisher.id, other.id])
            expect(both.map((d) => d.id)).toEqual([elsewhere.id, second.id, first.id])
            expect(yield* deployments.listForAgent(publisher.id, agentName, [])).toEqual([])
            expect((yield* deployments.liveInNamespace(namespace)).map((d) => d.id)).toEqual([second.id, first.id])
            expect(Option.getOrThrow(yield* deployments.findByNamespace(namespace)).id).toBe(second.id)
            yield* deployments.markUndeployed(first.id, "superseded", at("2026-11-02T10:00:00.000Z"))
            const ended = Option.getOrThrow(yield* deployments.findById(first.id))
            expect([ended.status, Option.map(ended.undeployed_at, DateTime.formatIso)]).toEqual([
              "superseded",
              Option.some("2026-11-02T10:00:00.000Z")
            ])
            expect((yield* deployments.liveInNamespace(namespace)).map((d) => d.id)).toEqual([second.id])
            expect(Option.isNone(yield* deployments.findByNamespace(uniqueName("ns")))).toBe(true)
          }))

        it.effect("listForAccount pages an account's deployments, most recent first, kept by live, ended or a status, with the total", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const account = yield* newAccount()
            const other = yield* newAccount()
            const make = (owner: Account.Account, day: string, status: string) =>
              deploymentOf(owner, { agent_name: Ids.AgentName.make(uniqueName("agent")), status, deployed_at: at(`2026-11-${day}T10:00:00.000Z`) })
            const first = make(account, "01", "available")
            const second = make(account, "02", "failed")
            const third = make(account, "03", "available")
            const foreign = make(other, "04", "available")
            for (const d of [first, second, third, foreign]) yield* deployments.upsert(d)
            yield* deployments.markUndeployed(first.id, "superseded", at("2026-11-03T10:00:00.000Z"))
            const ids = (found: { readonly deployments: ReadonlyArray<{ readonly id: string }>; readonly total: number }) =>
              [found.deployments.map((d) => d.id), found.total]
            const page = { limit: 10, offset: 0 }
            expect(ids(yield* deployments.listForAccount(account.id, {}, page))).toEqual([[third.id, second.id, first.id], 3])
            expect(ids(yield* deployments.listForAccount(account.id, {}, { limit: 1, offset: 1 }))).toEqual([[second.id], 3])
            expect(ids(yield* deployments.listForAccount(account.id, { status: "live" }, page))).toEqual([[third.id, second.id], 2])
            expect(ids(yield* deployments.listForAccount(account.id, { status: "ended" }, page))).toEqual([[first.id], 1])
            expect(ids(yield* deployments.listForAccount(account.id, { status: "failed" }, page))).toEqual([[second.id], 1])
            expect(ids(yield* deployments.listForAccount(account.id, { status: "superseded" }, page))).toEqual([[first.id], 1])
            expect(ids(yield* deployments.listForAccount(account.id, { status: "pending" }, page))).toEqual([[], 0])
          }))

        it.effect("liveOfAccounts gives the live deployments made by the given accounts, by id, a page after `after` at a time", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const mine = yield* newAccount()
            const theirs = yield* newAccount()
            const prefix = uniqueName("dep")
            const make = (account: Account.Account, suffix: string) => deploymentOf(account, { id: Deployment.DeploymentId.make(`${prefix}-${suffix}`) })
            const [c, a, b, ended, other] = [make(mine, "c"), make(mine, "a"), make(mine, "b"), make(mine, "d"), make(theirs, "e")]
            for (const d of [c, a, b, ended, other]) yield* deployments.upsert(d)
            yield* deployments.markUndeployed(ended.id, "undeployed", at("2026-11-02T10:00:00.000Z"))
            const ids = (records: ReadonlyArray<{ readonly id: string }>) => records.map((d) => d.id)
            expect(ids(yield* deployments.liveOfAccounts([mine.id], undefined, 10))).toEqual([a.id, b.id, c.id])
            expect(ids(yield* deployments.liveOfAccounts([mine.id], undefined, 2))).toEqual([a.id, b.id])
            expect(ids(yield* deployments.liveOfAccounts([mine.id], b.id, 2))).toEqual([c.id])
            expect(ids(yield* deployments.liveOfAccounts([mine.id, theirs.id], b.id, 10))).toEqual([c.id, other.id])
            expect(yield* deployments.liveOfAccounts([], undefined, 10)).toEqual([])
          }))

        it.effect("liveOfAccounts merges the pages of many accounts into one page by id (the SQL store reads 100 accounts a statement)", () =>
          Effect.gen(function*() {
            const deployments = yield* Ports.DeploymentStore
            const prefix = uniqueName("dep")
            const accounts: Array<Account.Account> = []
            for (let i = 0; i < 150; i++) {
              const account = yield* newAccount()
              accounts.push(account)
              // The first accounts given hold the last ids, so the page takes from every statement's rows.
              yield* deployments.upsert(deploymentOf(account, { id: Deployment.DeploymentId.make(`${prefix}-${String(149 - i).padStart(3, "0")}`) }))
            }
            const expected = Array.from({ length: 150 }, (_, i) => `${prefix}-${String(i).padStart(3, "0")}`)
            const given = [...accounts.map((a) => a.id), accounts[0]!.id]
            const ids = (records: ReadonlyArray<{ readonly id: string }>) => records.map((d) => d.id)
            expect(ids(yield* deployments.liveOfAccounts(given, undefined, 120))).toEqual(expected.slice(0, 120))
            const after = Deployment.DeploymentId.make(expected[59]!)
            expect(ids(yield* deployments.liveOfAccounts(given, after, 200))).toEqual(expected.slice(60))
          }))
      })

      describe("ConversationStore", () => {
        const message = (role: "user" | "assistant", content: string, time: string, status: Conversation.MessageStatus = "complete") =>
          new Conversation.Message({
            message_id: Conversation.MessageId.make(uniqueName("msg")),
            role,
            content,
            attachments: role === "user" ? [new Conversation.Attachment({ key: "f-1", filename: "a.txt" })] : [],
            timestamp: at(time),
            status
          })
        /** A turn of `content` at `time`, with a fresh reply leased until a minute later. */
        const turnOf = (
          where: { readonly id: Conversation.ConversationId; readonly deployment: Deployment.DeploymentId; readonly owner: Ids.UserId },
          content: string,
          time: string,
          options: { readonly clientId?: string; readonly limit?: number; readonly title?: string } = {}
        ): Ports.TurnInput => ({
          conversation_id: where.id,
          deployment_id: where.deployment,
          owner_id: where.owner,
          title: options.title ?? content,
          message: message("user", content, time),
          client_message_id: Option.fromNullable(options.clientId),
          reply: message("assistant", "", time, "streaming"),
          lease: { owner: uniqueName("process"), expires_at: DateTime.addDuration(at(time), "1 minute") },
          message_limit: options.limit ?? 200
        })
        /** A conversation created by a first turn ("first"), its reply completed ("answer"). */
        const newConversation = Effect.gen(function*() {
          const store = yield* Ports.ConversationStore
          const user = yield* newUser
          const id = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
          const deployment = Deployment.DeploymentId.make(uniqueName("dep"))
          const where = { id, deployment, owner: user.id }
          const first = turnOf(where, "first", "2026-11-01T10:00:00.000Z")
          expect(yield* store.startTurn(first)).toEqual({ _tag: "Started", user_messages: 0 })
          yield* store.updateMessage(first.reply.message_id, "answer", "complete", at("2026-11-01T10:00:01.000Z"))
          return { store, user, id, deployment, where }
        })
        const contentsOf = (messages: ReadonlyArray<Conversation.Message>) => messages.map((m) => [m.role, m.content, m.status])

        it.effect("startTurn creates the conversation with its first turn: the user message counted, then the reply streaming", () =>
          Effect.gen(function*() {
            const store = yield* Ports.ConversationStore
            const user = yield* newUser
            const id = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
            const deployment = Deployment.DeploymentId.make(uniqueName("dep"))
            const turn = turnOf({ id, deployment, owner: user.id }, "hi", "2026-11-01T10:01:00.000Z", { title: "A title" })
            expect(yield* store.startTurn(turn)).toEqual({ _tag: "Started", user_messages: 0 })
            const stored = Option.getOrThrow(yield* store.find(id))
            expect([stored.owner_id, stored.deployment_id, stored.title, stored.user_messages, stored.terminal, stored.assistant_streaming])
              .toEqual([user.id, deployment, "A title", 1, false, true])
            expect([DateTime.formatIso(stored.created_at), DateTime.formatIso(stored.updated_at)])
              .toEqual(["2026-11-01T10:01:00.000Z", "2026-11-01T10:01:00.000Z"])
            const all = yield* store.messages(id)
            expect(all.map((m) => m.message_id)).toEqual([turn.message.message_id, turn.reply.message_id])
            expect(contentsOf(all)).toEqual([["user", "hi", "complete"], ["assistant", "", "streaming"]])
            expect(all[0]!.attachments.map((a) => a.filename)).toEqual(["a.txt"])
            expect(all.map((m) => m.trace_id)).toEqual([null, null])
            expect(Option.getOrThrow(yield* store.latestReply(id)).message_id).toBe(turn.reply.message_id)
            // A reply carries the trace of its turn, through every read.
            const traced = turnOf({ id, deployment, owner: user.id }, "again", "2026-11-01T10:02:00.000Z")
            const traceId = "0af7651916cd43dd8448eb211c80319c"
            yield* store.startTurn({ ...traced, reply: new Conversation.Message({ ...traced.reply, trace_id: traceId }) })
            yield* store.updateMessage(traced.reply.message_id, "done", "complete", at("2026-11-01T10:02:01.000Z"))
            expect((yield* store.messages(id)).map((m) => m.trace_id)).toEqual([null, null, null, traceId])
            expect(Option.getOrThrow(yield* store.latestReply(id)).trace_id).toBe(traceId)
            expect(Option.isNone(yield* store.find(Conversation.ConversationId.make(globalThis.crypto.randomUUID())))).toBe(true)
          }))

        it.effect("a later turn counts and moves updated_at; a turn of another user or deployment is refused, writing nothing", () =>
          Effect.gen(function*() {
            const { deployment, id, store, where } = yield* newConversation
            const stranger = yield* newUser
            expect(yield* store.startTurn(turnOf({ ...where, owner: stranger.id }, "mine?", "2026-11-02T10:00:00.000Z")))
              .toEqual({ _tag: "NotOwner" })
            const elsewhere = Deployment.DeploymentId.make(uniqueName("dep"))
            expect(yield* store.startTurn(turnOf({ ...where, deployment: elsewhere }, "here?", "2026-11-02T10:00:00.000Z")))
              .toEqual({ _tag: "NotOwner" })
            expect(yield* store.startTurn(turnOf(where, "again", "2026-11-03T10:00:00.000Z", { title: "ignored" })))
              .toEqual({ _tag: "Started", user_messages: 1 })
            const stored = Option.getOrThrow(yield* store.find(id))
            expect([stored.owner_id, stored.deployment_id, stored.title, stored.user_messages]).toEqual([where.owner, deployment, "first", 2])
            expect(DateTime.formatIso(stored.updated_at)).toBe("2026-11-03T10:00:00.000Z")
            expect(contentsOf(yield* store.messages(id))).toEqual([
              ["user", "first", "complete"],
              ["assistant", "answer", "complete"],
              ["user", "again", "complete"],
              ["assistant", "", "streaming"]
            ])
          }))

        it.effect("a turn with a client_message_id already used in the conversation gives the earlier message and writes nothing", () =>
          Effect.gen(function*() {
            const { id, store, where } = yield* newConversation
            const turn = turnOf(where, "once", "2026-11-02T10:00:00.000Z", { clientId: "c-1" })
            expect(yield* store.startTurn(turn)).toEqual({ _tag: "Started", user_messages: 1 })
            const retried = yield* store.startTurn(turnOf(where, "once", "2026-11-02T10:00:05.000Z", { clientId: "c-1" }))
            expect(retried._tag === "Repeated" && [retried.message.message_id, retried.message.content, retried.message.role])
              .toEqual([turn.message.message_id, "once", "user"])
            expect(retried._tag === "Repeated" && DateTime.formatIso(retried.message.timestamp)).toBe("2026-11-02T10:00:00.000Z")
            expect(Option.getOrThrow(yield* store.find(id)).user_messages).toBe(2)
            expect((yield* store.messages(id)).length).toBe(4)
            expect(yield* store.startTurn(turnOf(where, "new", "2026-11-02T10:01:00.000Z", { clientId: "c-2" })))
              .toEqual({ _tag: "Started", user_messages: 2 })
            const other = yield* newConversation
            expect(yield* other.store.startTurn(turnOf(other.where, "elsewhere", "2026-11-02T10:00:00.000Z", { clientId: "c-1" })))
              .toEqual({ _tag: "Started", user_messages: 1 })
          }))

        it.effect("the turn that reaches the limit makes the conversation terminal; later turns, or a lower limit, are refused", () =>
          Effect.gen(function*() {
            const { id, store, where } = yield* newConversation
            expect(yield* store.startTurn(turnOf(where, "two", "2026-11-02T10:00:00.000Z", { limit: 3 })))
              .toEqual({ _tag: "Started", user_messages: 1 })
            expect(yield* store.startTurn(turnOf(where, "three", "2026-11-02T10:01:00.000Z", { limit: 2 })))
              .toEqual({ _tag: "LimitReached" })
            expect(Option.getOrThrow(yield* store.find(id)).terminal).toBe(false)
            expect(yield* store.startTurn(turnOf(where, "three", "2026-11-02T10:02:00.000Z", { limit: 3 })))
              .toEqual({ _tag: "Started", user_messages: 2 })
            expect(Option.getOrThrow(yield* store.find(id)).terminal).toBe(true)
            expect(yield* store.startTurn(turnOf(where, "four", "2026-11-02T10:03:00.000Z", { limit: 10 })))
              .toEqual({ _tag: "LimitReached" })
            const stored = Option.getOrThrow(yield* store.find(id))
            expect([stored.user_messages, DateTime.formatIso(stored.updated_at)]).toEqual([3, "2026-11-02T10:02:00.000Z"])
            expect((yield* store.messages(id)).length).toBe(6)
            const single = { ...where, id: Conversation.ConversationId.make(globalThis.crypto.randomUUID()) }
            expect(yield* store.startTurn(turnOf(single, "only", "2026-11-02T10:00:00.000Z", { limit: 1 })))
              .toEqual({ _tag: "Started", user_messages: 0 })
            expect(Option.getOrThrow(yield* store.find(single.id)).terminal).toBe(true)
            const none = { ...where, id: Conversation.ConversationId.make(globalThis.crypto.randomUUID()) }
            expect(yield* store.startTurn(turnOf(none, "never", "2026-11-02T10:00:00.000Z", { limit: 0 }))).toEqual({ _tag: "LimitReached" })
            expect(Option.isNone(yield* store.find(none.id))).toBe(true)
          }))

        it.effect("concurrent turns on one conversation, each in its transaction, take turns: counted once each, up to the limit", () =>
          Effect.gen(function*() {
            const store = yield* Ports.ConversationStore
            const tx = yield* Ports.Transactor
            const user = yield* newUser
            const where = {
              id: Conversation.ConversationId.make(globalThis.crypto.randomUUID()),
              deployment: Deployment.DeploymentId.make(uniqueName("dep")),
              owner: user.id
            }
            const outcomes = yield* Effect.forEach(
              Array.from({ length: 6 }, (_, i) => turnOf(where, `m${i}`, "2026-11-02T10:00:00.000Z", { limit: 4 })),
              (turn) => tx.withTransaction(store.startTurn(turn)),
              { concurrency: "unbounded" }
            )
            const started = outcomes.flatMap((o) => (o._tag === "Started" ? [o.user_messages] : []))
            expect(started.sort()).toEqual([0, 1, 2, 3])
            expect(outcomes.filter((o) => o._tag === "LimitReached").length).toBe(2)
            const stored = Option.getOrThrow(yield* store.find(where.id))
            expect([stored.user_messages, stored.terminal]).toEqual([4, true])
            expect((yield* store.messages(where.id)).map((m) => m.role)).toEqual(Array.from({ length: 4 }, () => ["user", "assistant"]).flat())
          }))

        it.effect("append adds a message, a user one counted; updateMessage replaces a reply's content and status", () =>
          Effect.gen(function*() {
            const { id, store } = yield* newConversation
            const question = message("user", "hi", "2026-11-01T10:01:00.000Z")
            const reply = message("assistant", "", "2026-11-01T10:01:01.000Z", "streaming")
            yield* store.append({ conversation_id: id, message: question, client_message_id: Option.some("c-1") })
            yield* store.append({ conversation_id: id, message: reply, client_message_id: Option.none() })
            const during = Option.getOrThrow(yield* store.find(id))
            expect([during.user_messages, during.assistant_streaming]).toEqual([2, true])
            expect(DateTime.formatIso(during.updated_at)).toBe("2026-11-01T10:01:01.000Z")
            yield* store.updateMessage(reply.message_id, "hello", "complete", at("2026-11-01T10:01:02.000Z"))
            expect(Option.getOrThrow(yield* store.find(id)).assistant_streaming).toBe(false)
            expect(contentsOf(yield* store.messages(id)).slice(2)).toEqual([["user", "hi", "complete"], ["assistant", "hello", "complete"]])
            expect(Option.getOrThrow(yield* store.latestReply(id)).content).toBe("hello")
          }))

        it.effect("flushReplies stores what arrived of several streaming replies at once and leaves a reply that ended as it is", () =>
          Effect.gen(function*() {
            const { id, store } = yield* newConversation
            const first = message("assistant", "", "2026-11-01T10:01:00.000Z", "streaming")
            const second = message("assistant", "", "2026-11-01T10:01:01.000Z", "streaming")
            const ended = message("assistant", "", "2026-11-01T10:01:02.000Z", "streaming")
            for (const reply of [first, second, ended]) {
              yield* store.append({ conversation_id: id, message: reply, client_message_id: Option.none() })
            }
            yield* store.updateMessage(ended.message_id, "final", "complete", at("2026-11-01T10:01:03.000Z"))
            yield* store.flushReplies([
              { id: first.message_id, content: "one" },
              { id: second.message_id, content: "two, with 'quotes' and é" },
              { id: ended.message_id, content: "stale" }
            ], at("2026-11-01T10:01:04.000Z"))
            expect(contentsOf(yield* store.messages(id)).slice(2)).toEqual([
              ["assistant", "one", "streaming"],
              ["assistant", "two, with 'quotes' and é", "streaming"],
              ["assistant", "final", "complete"]
            ])
            yield* store.flushReplies([], at("2026-11-01T10:01:05.000Z"))
          }))

        it.effect("streaming replies close by lease: an ended lease closes, a renewed one stays; without a time all close, content kept", () =>
          Effect.gen(function*() {
            const { id, store } = yield* newConversation
            const owner = uniqueName("process")
            const renewed = message("assistant", "part", "2026-11-01T10:01:00.000Z", "streaming")
            const lapsed = message("assistant", "", "2026-11-01T10:01:01.000Z", "streaming")
            const unleased = message("assistant", "", "2026-11-01T10:01:02.000Z", "streaming")
            yield* store.append({
              conversation_id: id,
              message: renewed,
              client_message_id: Option.none(),
              lease: { owner, expires_at: at("2026-11-01T10:01:10.000Z") }
            })
            yield* store.append({
              conversation_id: id,
              message: lapsed,
              client_message_id: Option.none(),
              lease: { owner: uniqueName("gone"), expires_at: at("2026-11-01T10:01:01.000Z") }
            })
            yield* store.append({ conversation_id: id, message: unleased, client_message_id: Option.none() })
            const mine = (closed: ReadonlyArray<{ readonly message: Conversation.Message }>) =>
              closed.map((c) => c.message.message_id).filter((m) => [renewed, lapsed, unleased].some((x) => x.message_id === m)).sort()
            const first = yield* store.closeStreaming(Option.some(at("2026-11-01T10:01:05.000Z")))
            expect(mine(first)).toEqual([lapsed.message_id, unleased.message_id].sort())
            expect(first.find((c) => c.message.message_id === lapsed.message_id)?.conversation_id).toBe(id)
            yield* store.renewLeases(owner, at("2026-11-01T10:02:00.000Z"))
            expect(mine(yield* store.closeStreaming(Option.some(at("2026-11-01T10:01:30.000Z"))))).toEqual([])
            expect(Option.getOrThrow(yield* store.find(id)).assistant_streaming).toBe(true)
            expect(mine(yield* store.closeStreaming(Option.none()))).toEqual([renewed.message_id])
            const all = yield* store.messages(id)
            expect(all.slice(2).map((m) => [m.content, m.status])).toEqual([["part", "failed"], ["", "failed"], ["", "failed"]])
          }))

        it.effect("a turn's reply carries its lease: it closes when the lease ends, and stays while renewed", () =>
          Effect.gen(function*() {
            const { store, where } = yield* newConversation
            const turn = turnOf(where, "leased", "2026-11-01T10:05:00.000Z")
            yield* store.startTurn(turn)
            const mine = (closed: ReadonlyArray<{ readonly message: Conversation.Message }>) =>
              closed.filter((c) => c.message.message_id === turn.reply.message_id).length
            expect(mine(yield* store.closeStreaming(Option.some(at("2026-11-01T10:05:30.000Z"))))).toBe(0)
            yield* store.renewLeases(turn.lease.owner, at("2026-11-01T10:07:00.000Z"))
            expect(mine(yield* store.closeStreaming(Option.some(at("2026-11-01T10:06:30.000Z"))))).toBe(0)
            expect(mine(yield* store.closeStreaming(Option.some(at("2026-11-01T10:07:30.000Z"))))).toBe(1)
          }))

        it.effect("the replies of an owner named gone close whatever their lease; no owner of this test is reported gone", () =>
          Effect.gen(function*() {
            const { store, where } = yield* newConversation
            const turn = turnOf(where, "leased", "2026-11-01T10:05:00.000Z")
            yield* store.startTurn(turn)
            const other = uniqueName("other-process")
            expect(yield* store.goneOwners).not.toContain(turn.lease.owner)
            const mine = (closed: ReadonlyArray<{ readonly message: Conversation.Message }>) =>
              closed.filter((c) => c.message.message_id === turn.reply.message_id).length
            expect(mine(yield* store.closeStreaming(Option.some(at("2026-11-01T10:05:30.000Z")), [other]))).toBe(0)
            expect(mine(yield* store.closeStreaming(Option.some(at("2026-11-01T10:05:30.000Z")), [other, turn.lease.owner]))).toBe(1)
          }))

        it.effect("listFor gives a user's conversations on a deployment as summaries, most recently updated first; each streams on its own", () =>
          Effect.gen(function*() {
            const { deployment, id, store, user, where } = yield* newConversation
            const second = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
            yield* store.startTurn(turnOf({ ...where, id: second }, "later", "2026-11-03T10:00:00.000Z"))
            const summaries = (listed: ReadonlyArray<Conversation.ConversationSummary>) =>
              listed.map((c) => [c.conversation_id, c.title, DateTime.formatIso(c.updated_at), c.assistant_streaming])
            // The second's reply streams; the first's was completed, and another's stream does not count for it.
            expect(summaries(yield* store.listFor(deployment, user.id))).toEqual([
              [second, "later", "2026-11-03T10:00:00.000Z", true],
              [id, "first", "2026-11-01T10:00:00.000Z", false]
            ])
            yield* store.setTitle(id, "renamed", at("2026-11-04T10:00:00.000Z"))
            yield* store.startTurn(turnOf(where, "last", "2026-11-04T10:00:00.000Z", { limit: 2 }))
            expect(summaries(yield* store.listFor(deployment, user.id))).toEqual([
              [id, "renamed", "2026-11-04T10:00:00.000Z", true],
              [second, "later", "2026-11-03T10:00:00.000Z", true]
            ])
            expect(Option.map(yield* store.find(id), (c) => c.terminal)).toEqual(Option.some(true))
            expect(yield* store.listFor(deployment, (yield* newUser).id)).toEqual([])
            expect(yield* store.listFor(Deployment.DeploymentId.make(uniqueName("dep")), user.id)).toEqual([])
          }))
      })

      describe("FileStore", () => {
        it.effect("a file record reads back by deployment and key, and upsert replaces it", () =>
          Effect.gen(function*() {
            const files = yield* Ports.FileStore
            const user = yield* newUser
            const deployment = Deployment.DeploymentId.make(uniqueName("dep"))
            const record = new File.FileRecord({
              key: uniqueName("f"),
              deployment_id: deployment,
              owner_id: user.id,
              filename: "notes.txt",
              content_type: "text/plain",
              size: 5,
              status: "pending",
              origin: "user",
              conversation_id: Option.none(),
              created_at: at("2026-11-01T10:00:00.000Z")
            })
            yield* files.upsert(record)
            yield* files.upsert(new File.FileRecord({ ...record, status: "ready" }))
            const found = Option.getOrThrow(yield* files.find(deployment, record.key))
            expect([found.filename, found.size, found.status, found.owner_id]).toEqual(["notes.txt", 5, "ready", user.id])
            expect(Option.isNone(yield* files.find(Deployment.DeploymentId.make(uniqueName("dep")), record.key))).toBe(true)
            const later = new File.FileRecord({ ...record, key: uniqueName("f"), created_at: at("2026-11-02T10:00:00.000Z") })
            yield* files.upsert(later)
            expect((yield* files.listFor(deployment, user.id)).map((f) => f.key)).toEqual([later.key, record.key])
            expect(yield* files.listFor(deployment, (yield* newUser).id)).toEqual([])
          }))

        it.effect("pendingBefore gives pending files reserved before a time, oldest first; removePending removes only pending ones", () =>
          Effect.gen(function*() {
            const files = yield* Ports.FileStore
            const user = yield* newUser
            const deployment = Deployment.DeploymentId.make(uniqueName("dep"))
            // Long ago, so that the files other tests make on a shared database come after these.
            const file = (iso: string, status: File.FileRecord["status"]) =>
              new File.FileRecord({
                key: uniqueName("f"),
                deployment_id: deployment,
                owner_id: user.id,
                filename: "partial.bin",
                content_type: "application/octet-stream",
                size: 7,
                status,
                origin: "user",
                conversation_id: Option.none(),
                created_at: at(iso)
              })
            const older = file("1990-01-01T10:00:00.000Z", "pending")
            const newer = file("1990-01-01T10:05:00.000Z", "pending")
            const ready = file("1990-01-01T10:01:00.000Z", "ready")
            const recent = file("1990-01-01T11:00:00.000Z", "pending")
            for (const f of [newer, ready, recent, older]) yield* files.upsert(f)
            const mine = (list: ReadonlyArray<File.FileRecord>) => list.filter((f) => f.deployment_id === deployment)

            const expired = mine(yield* files.pendingBefore(at("1990-01-01T11:00:00.000Z"), 1000))
            expect(expired.map((f) => f.key)).toEqual([older.key, newer.key])
            expect([expired[0]!.owner_id, expired[0]!.size, expired[0]!.status]).toEqual([user.id, 7, "pending"])
            expect(mine(yield* files.pendingBefore(at("1990-01-01T10:00:00.000Z"), 1000))).toEqual([])
            expect((yield* files.pendingBefore(at("1990-01-01T11:00:00.000Z"), 1)).length).toBe(1)

            expect(yield* files.removePending(deployment, older.key)).toBe(true)
            expect(yield* files.removePending(deployment, older.key)).toBe(false)
            expect(yield* files.removePending(deployment, ready.key)).toBe(false)
            expect(yield* files.removePending(Deployment.DeploymentId.make(uniqueName("dep")), newer.key)).toBe(false)
            expect(Option.isNone(yield* files.find(deployment, older.key))).toBe(true)
            expect(Option.getOrThrow(yield* files.find(deployment, ready.key)).status).toBe("ready")
            expect((yield* files.listFor(deployment, user.id)).map((f) => f.key)).toEqual([recent.key, newer.key, ready.key])

            // Completed meanwhile: no longer pending, so no longer removable.
            yield* files.upsert(new File.FileRecord({ ...newer, status: "ready" }))
            expect(mine(yield* files.pendingBefore(at("1990-01-01T11:00:00.000Z"), 1000))).toEqual([])
            expect(yield* files.removePending(deployment, newer.key)).toBe(false)
            expect(yield* files.removePending(deployment, recent.key)).toBe(true)
            expect((yield* files.listFor(deployment, user.id)).map((f) => f.key)).toEqual([newer.key, ready.key])
          }))
      })

      describe("TraceStore", () => {
        const traceOf = (
          publisher: Account.Account,
          agentName: Ids.AgentName,
          account: Account.Account,
          id: string,
          iso: string,
          status: Trace.TraceStatus = "ok"
        ) =>
          new Trace.TraceRecord({
            publisher_id: publisher.id,
            agent_name: agentName,
            account_id: account.id,
            owner_id: Option.none(),
            trace_id: id,
            name: "chat",
            status,
            latency_ms: 12.5,
            input: "hi ✓",
            output: "hello",
            timestamp: at(iso)
          })
        const query = (publisher: Account.Account, agentName: Ids.AgentName, accounts: ReadonlyArray<Account.Account>, extra: Partial<Trace.TraceQuery> = {}) =>
          Effect.flatMap(Ports.TraceStore, (store) =>
            store.query(TraceQueries.of({
              publisher_id: publisher.id,
              agent_name: agentName,
              account_ids: accounts.map((a) => a.id),
              viewer: Ids.UserId.make("viewer"),
              ...extra
            })))

        it.effect("traces read back newest first with every field; the same id replaces; total counts the filtered set", () =>
          Effect.gen(function*() {
            const store = yield* Ports.TraceStore
            const publisher = yield* newAccount()
            const other = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            yield* store.append([
              traceOf(publisher, agentName, publisher, "t-1", "2026-11-01T10:00:00.000Z"),
              traceOf(publisher, agentName, publisher, "t-2", "2026-11-01T11:00:00.000Z", "error"),
              traceOf(publisher, agentName, publisher, "t-3", "2026-11-01T12:00:00.000Z"),
              traceOf(publisher, agentName, other, "t-4", "2026-11-01T13:00:00.000Z"),
              traceOf(publisher, Ids.AgentName.make(uniqueName("agent")), publisher, "t-5", "2026-11-01T14:00:00.000Z")
            ])
            yield* store.append([new Trace.TraceRecord({ ...traceOf(publisher, agentName, publisher, "t-1", "2026-11-01T10:00:00.000Z"), output: "replaced" })])
            const all = yield* query(publisher, agentName, [publisher])
            expect(all.total).toBe(3)
            expect(all.traces.map((t) => t.trace_id)).toEqual(["t-3", "t-2", "t-1"])
            const first = all.traces[2]!
            expect([first.name, first.status, first.latency_ms, first.input, first.output, DateTime.formatIso(first.timestamp)])
              .toEqual(["chat", "ok", 12.5, "hi ✓", "replaced", "2026-11-01T10:00:00.000Z"])
            expect((yield* query(publisher, agentName, [publisher, other])).total).toBe(4)
            expect(yield* query(publisher, agentName, [])).toEqual({ traces: [], total: 0 })
          }))

        it.effect("a batch that holds one id twice keeps the later trace; a batch larger than one statement lands whole", () =>
          Effect.gen(function*() {
            const store = yield* Ports.TraceStore
            const publisher = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            const first = traceOf(publisher, agentName, publisher, "t-1", "2026-11-01T10:00:00.000Z")
            yield* store.append([first, new Trace.TraceRecord({ ...first, output: "later" })])
            const [only] = (yield* query(publisher, agentName, [publisher])).traces
            expect([only?.trace_id, only?.output]).toEqual(["t-1", "later"])
            yield* store.append([])
            yield* store.append(Array.from({ length: 1200 }, (_, i) =>
              traceOf(publisher, agentName, publisher, `many-${i}`, "2026-11-02T10:00:00.000Z")))
            expect((yield* query(publisher, agentName, [publisher])).total).toBe(1201)
          }))

        it.effect("filters by time window (both ends inclusive) and status, and pages with limit and offset", () =>
          Effect.gen(function*() {
            const store = yield* Ports.TraceStore
            const publisher = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            yield* store.append(Array.from({ length: 7 }, (_, i) =>
              traceOf(publisher, agentName, publisher, `t-${i}`, `2026-11-0${i + 1}T10:00:00.000Z`, i % 3 === 0 ? "error" : "ok")))
            const window = yield* query(publisher, agentName, [publisher], {
              start: Option.some(at("2026-11-02T10:00:00.000Z")),
              end: Option.some(at("2026-11-06T10:00:00.000Z"))
            })
            expect(window.traces.map((t) => t.trace_id)).toEqual(["t-5", "t-4", "t-3", "t-2", "t-1"])
            const errors = yield* query(publisher, agentName, [publisher], { status: Option.some("error") })
            expect([errors.total, errors.traces.map((t) => t.trace_id)]).toEqual([3, ["t-6", "t-3", "t-0"]])
            const page = yield* query(publisher, agentName, [publisher], { limit: 2, offset: 2 })
            expect([page.total, page.traces.map((t) => t.trace_id)]).toEqual([7, ["t-4", "t-3"]])
            const beyond = yield* query(publisher, agentName, [publisher], { limit: 2, offset: 7 })
            expect([beyond.total, beyond.traces]).toEqual([7, []])
          }))

        it.effect("a trace with an owner is read only by its owner, in the page and the total; one without by every viewer", () =>
          Effect.gen(function*() {
            const store = yield* Ports.TraceStore
            const publisher = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            const alice = Ids.UserId.make(uniqueName("alice"))
            const bob = Ids.UserId.make(uniqueName("bob"))
            const mine = new Trace.TraceRecord({
              ...traceOf(publisher, agentName, publisher, "t-alice", "2026-11-01T10:00:00.000Z"),
              owner_id: Option.some(alice)
            })
            yield* store.append([
              mine,
              new Trace.TraceRecord({ ...traceOf(publisher, agentName, publisher, "t-bob", "2026-11-01T11:00:00.000Z"), owner_id: Option.some(bob) }),
              traceOf(publisher, agentName, publisher, "t-shared", "2026-11-01T12:00:00.000Z")
            ])
            const seenBy = (viewer: Ids.UserId) =>
              Effect.map(query(publisher, agentName, [publisher], { viewer }), (page) => [page.total, page.traces.map((t) => t.trace_id)])
            expect(yield* seenBy(alice)).toEqual([2, ["t-shared", "t-alice"]])
            expect(yield* seenBy(bob)).toEqual([2, ["t-shared", "t-bob"]])
            expect(yield* seenBy(Ids.UserId.make(uniqueName("carol")))).toEqual([1, ["t-shared"]])
            const [read] = (yield* query(publisher, agentName, [publisher], { viewer: alice, status: Option.some("ok"), limit: 1, offset: 1 })).traces
            expect(read?.owner_id).toEqual(Option.some(alice))
            // Stored again for the same owner (an exporter's retry), a trace is replaced...
            yield* store.append([new Trace.TraceRecord({ ...mine, output: "retried" })])
            expect((yield* query(publisher, agentName, [publisher], { viewer: alice })).traces.find((t) => t.trace_id === "t-alice")?.output)
              .toBe("retried")
            // ...but one stored for another owner or account (an agent's root span in a chat turn's trace) replaces nothing.
            yield* store.append([new Trace.TraceRecord({ ...mine, owner_id: Option.some(bob), output: "taken" })])
            yield* store.append([new Trace.TraceRecord({ ...mine, owner_id: Option.none(), output: "taken" })])
            expect(yield* seenBy(alice)).toEqual([2, ["t-shared", "t-alice"]])
            expect(yield* seenBy(bob)).toEqual([2, ["t-shared", "t-bob"]])
            expect((yield* query(publisher, agentName, [publisher], { viewer: alice })).traces.find((t) => t.trace_id === "t-alice")?.output)
              .toBe("retried")
          }))

        const spanOf = (publisher: Account.Account, agentName: Ids.AgentName, traceId: string, spanId: string, parent: string | null, second = 0) =>
          new Trace.SpanRecord({
            publisher_id: publisher.id,
            agent_name: agentName,
            trace_id: traceId,
            span_id: spanId,
            parent_span_id: parent,
            name: `span ${spanId}`,
            kind: "client",
            status: "error",
            status_message: "tool failed ✓",
            start_time: at(`2026-11-01T10:00:${String(second).padStart(2, "0")}.250Z`),
            end_time: at(`2026-11-01T10:00:${String(second).padStart(2, "0")}.750Z`),
            duration_ms: 500.5,
            attributes: { "gen_ai.request.model": "m-1", "input.value": "hi ✓" },
            events: [new Trace.SpanEvent({ name: "exception", timestamp: at("2026-11-01T10:00:00.500Z"), attributes: { "exception.type": "Boom" } })]
          })
        const lookup = (publisher: Account.Account, agentName: Ids.AgentName, traceId: string, extra: Partial<Trace.TraceLookup> = {}) =>
          Effect.flatMap(Ports.TraceStore, (store) =>
            store.find({
              publisher_id: publisher.id,
              agent_name: agentName,
              trace_id: traceId,
              account_ids: [publisher.id],
              viewer: Ids.UserId.make("viewer"),
              ...extra
            }))

        it.effect("a trace is found with its spans, every field read back; the same span id replaces; visibility as in a query", () =>
          Effect.gen(function*() {
            const store = yield* Ports.TraceStore
            const publisher = yield* newAccount()
            const other = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            expect(yield* lookup(publisher, agentName, "t-1")).toEqual(Option.none())
            // Spans may come before their trace: they wait for it.
            yield* store.appendSpans([spanOf(publisher, agentName, "t-1", "s-child", "s-root", 1)])
            expect(yield* lookup(publisher, agentName, "t-1")).toEqual(Option.none())
            yield* store.append([traceOf(publisher, agentName, publisher, "t-1", "2026-11-01T10:00:00.000Z")])
            yield* store.appendSpans([
              spanOf(publisher, agentName, "t-1", "s-root", null),
              new Trace.SpanRecord({ ...spanOf(publisher, agentName, "t-1", "s-child", "s-root", 1), name: "replaced" }),
              spanOf(publisher, agentName, "t-2", "s-other", null)
            ])
            const found = Option.getOrThrow(yield* lookup(publisher, agentName, "t-1"))
            expect(found.trace.trace_id).toBe("t-1")
            const spans = [...found.spans].sort((a, b) => a.span_id.localeCompare(b.span_id))
            expect(spans.map((s) => [s.span_id, s.parent_span_id, s.name])).toEqual([["s-child", "s-root", "replaced"], ["s-root", null, "span s-root"]])
            const root = spans[1]!
            expect([root.kind, root.status, root.status_message, DateTime.formatIso(root.start_time), DateTime.formatIso(root.end_time), root.duration_ms])
              .toEqual(["client", "error", "tool failed ✓", "2026-11-01T10:00:00.250Z", "2026-11-01T10:00:00.750Z", 500.5])
            expect(root.attributes).toEqual({ "gen_ai.request.model": "m-1", "input.value": "hi ✓" })
            expect(root.events.map((e) => [e.name, DateTime.formatIso(e.timestamp), e.attributes]))
              .toEqual([["exception", "2026-11-01T10:00:00.500Z", { "exception.type": "Boom" }]])
            // Visibility: the accounts and the owner of a query.
            expect(yield* lookup(publisher, agentName, "t-1", { account_ids: [other.id] })).toEqual(Option.none())
            expect(yield* lookup(publisher, agentName, "t-1", { account_ids: [] })).toEqual(Option.none())
            yield* store.append([
              new Trace.TraceRecord({ ...traceOf(publisher, agentName, publisher, "t-owned", "2026-11-01T10:00:00.000Z"), owner_id: Option.some(Ids.UserId.make("alice")) })
            ])
            expect(yield* lookup(publisher, agentName, "t-owned")).toEqual(Option.none())
            expect(Option.isSome(yield* lookup(publisher, agentName, "t-owned", { viewer: Ids.UserId.make("alice") }))).toBe(true)
          }))

        it.effect(`a trace keeps at most ${Trace.maxSpansPerTrace} spans, across appends; spans already stored are still replaced`, () =>
          Effect.gen(function*() {
            const store = yield* Ports.TraceStore
            const publisher = yield* newAccount()
            const agentName = Ids.AgentName.make(uniqueName("agent"))
            yield* store.append([traceOf(publisher, agentName, publisher, "t-big", "2026-11-01T10:00:00.000Z")])
            const spans = (from: number, count: number) =>
              Array.from({ length: count }, (_, i) => spanOf(publisher, agentName, "t-big", `s-${from + i}`, null))
            yield* store.appendSpans(spans(0, Trace.maxSpansPerTrace - 10))
            yield* store.appendSpans(spans(Trace.maxSpansPerTrace - 10, 30))
            yield* store.appendSpans([new Trace.SpanRecord({ ...spans(0, 1)[0]!, name: "again" })])
            const found = Option.getOrThrow(yield* lookup(publisher, agentName, "t-big"))
            expect(found.spans.length).toBe(Trace.maxSpansPerTrace)
            expect(found.spans.find((s) => s.span_id === "s-0")?.name).toBe("again")
            expect(found.spans.some((s) => s.span_id === `s-${Trace.maxSpansPerTrace}`)).toBe(false)
          }))
      })

      describe("EventLog and Transactor", () => {
        it.effect("events get increasing ids and are read per account after an id", () =>
          Effect.gen(function*() {
            const log = yield* Ports.EventLog
            const a = yield* newAccount()
            const b = yield* newAccount()
            const now = at("2026-11-01T10:00:00.000Z")
            const stored = yield* log.append([
              { account_id: a.id, type: "agent.build", data: { agent: "x/y", status: "registered" } },
              { account_id: b.id, type: "agent.build", data: { agent: "x/y", status: "registered" } },
              { account_id: a.id, type: "agent.build", data: { agent: "x/y", status: "published" } }
            ], now)
            expect(BigInt(stored[1]!.id) > BigInt(stored[0]!.id)).toBe(true)
            expect(BigInt(stored[2]!.id) > BigInt(stored[1]!.id)).toBe(true)
            const all = yield* log.after(a.id, Option.none(), 100)
            expect(all.map((e) => e.data["status"])).toEqual(["registered", "published"])
            const later = yield* log.after(a.id, Option.some(all[0]!.id), 100)
            expect(later.map((e) => e.id)).toEqual([all[1]!.id])
            expect((yield* log.after(a.id, Option.none(), 1)).length).toBe(1)
          }))

        it.effect("latest gives the newest events after an id, oldest first", () =>
          Effect.gen(function*() {
            const log = yield* Ports.EventLog
            const a = yield* newAccount()
            const now = at("2026-11-01T10:00:00.000Z")
            const stored = yield* log.append(
              [1, 2, 3, 4, 5].map((n) => ({ account_id: a.id, type: "agent.build" as const, data: { n } })),
              now
            )
            const tail = yield* log.latest(a.id, Option.some(stored[0]!.id), 2)
            expect(tail.map((e) => e.data["n"])).toEqual([4, 5])
            const all = yield* log.latest(a.id, Option.none(), 10)
            expect(all.map((e) => e.data["n"])).toEqual([1, 2, 3, 4, 5])
          }))

        it.effect("horizon bounds the ids; prune deletes events older than a time and raises the pruned mark", () =>
          Effect.gen(function*() {
            const log = yield* Ports.EventLog
            const a = yield* newAccount()
            const [old] = yield* log.append([{ account_id: a.id, type: "agent.build", data: { age: "old" } }], at("2000-01-01T00:00:00.000Z"))
            const [recent] = yield* log.append([{ account_id: a.id, type: "agent.build", data: { age: "new" } }], at("2100-01-01T00:00:00.000Z"))
            const before = yield* log.horizon
            expect(before.newest >= BigInt(recent!.id)).toBe(true)
            expect(yield* log.prune(at("2001-01-01T00:00:00.000Z"))).toBeGreaterThanOrEqual(1)
            const after = yield* log.horizon
            expect(after.pruned >= BigInt(old!.id)).toBe(true)
            expect(after.pruned < BigInt(recent!.id)).toBe(true)
            expect((yield* log.after(a.id, Option.none(), 10)).map((e) => e.data["age"])).toEqual(["new"])
            expect(yield* log.prune(at("2001-01-01T00:00:00.000Z"))).toBe(0)
          }))

        it.effect("a failed transaction leaves nothing behind", () =>
          Effect.gen(function*() {
            const tx = yield* Ports.Transactor
            const store = yield* Ports.AccountStore
            const log = yield* Ports.EventLog
            const name = Ids.AccountName.make(uniqueName("rolled-back"))
            const id = Ids.AccountId.make(uniqueName("id"))
            const result = yield* tx.withTransaction(Effect.gen(function*() {
              yield* store.ensure({ id, name, now: at("2026-11-01T10:00:00.000Z") })
              yield* log.append([{ account_id: id, type: "agent.build", data: {} }], at("2026-11-01T10:00:00.000Z"))
              return yield* Effect.fail("boom" as const)
            })).pipe(Effect.flip)
            expect(result).toBe("boom")
            expect(Option.isNone(yield* store.findByName(name))).toBe(true)
            expect(yield* log.after(id, Option.none(), 10)).toEqual([])
          }))
      })
    })
  })
}
