/**
 * Use-case tests of accounts and authentication.
 */
import { describe, expect, it } from "@effect/vitest"
import { Accounts, Catalog, Deployment, Files, Identity, Ids, ObjectStore, Ports } from "@hosting/core"
import * as Fixtures from "@hosting/testing/Fixtures"
import { Seed, StorageSuite, TestServices } from "@hosting/testing"
import { DateTime, Effect, Option, Stream, TestClock } from "effect"

describe("Accounts", () => {
  it.layer(TestServices.layer)((it) => {
    it.effect("GET /me gives the current user and each account with the role held", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const me = yield* accounts.me(team.principals.admin)
        expect(me.user.id).toBe(team.principals.admin.user.id)
        expect(me.accounts).toEqual([{ name: team.account, role: "admin" }])
      }))

    it.effect("account rename needs owner or admin (403 otherwise) and moves the agents with it", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const catalog = yield* Catalog.Catalog
        yield* catalog.register(team.principals.owner, {
          account: team.account,
          name: Ids.AgentName.make("helper"),
          build_id: Ids.BuildId.make("b-1"),
          registry: "ghcr.io/acme",
          spec_content: "name: helper\ndescription: d\n"
        })
        const newName = Ids.AccountName.make(StorageSuite.uniqueName("renamed"))
        expect((yield* Effect.flip(accounts.rename(team.principals.member, team.account, newName)))._tag).toBe("PermissionDenied")
        expect((yield* Effect.flip(accounts.rename(team.principals.outsider, team.account, newName)))._tag).toBe(
          "PermissionDenied"
        )
        const result = yield* accounts.rename(team.principals.admin, team.account, newName)
        expect(result).toEqual({ previous: team.account, name: newName })
        const agent = yield* catalog.get(Option.some(team.principals.owner), newName, Ids.AgentName.make("helper"))
        expect(agent.account).toBe(newName)
        const old = yield* Effect.flip(catalog.get(Option.some(team.principals.owner), team.account, Ids.AgentName.make("helper")))
        expect(old._tag).toBe("AgentNotFound")
      }))

    it.effect("renaming to a name another account holds is refused and changes nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const other = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const error = yield* Effect.flip(accounts.rename(team.principals.owner, team.account, other.account))
        expect(error._tag).toBe("AccountNameTaken")
        expect((yield* accounts.me(team.principals.owner)).accounts.map((a) => a.name)).toEqual([team.account])
      }))

    it.effect("renaming to the current name is accepted and changes nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        expect(yield* accounts.rename(team.principals.owner, team.account, team.account)).toEqual({
          previous: team.account,
          name: team.account
        })
      }))

    it.effect("renaming an account that does not exist is 404", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const error = yield* Effect.flip(
          accounts.rename(team.principals.owner, Ids.AccountName.make("nobody-has-this"), Ids.AccountName.make("x"))
        )
        expect(error._tag).toBe("AccountNotFound")
      }))

    it.effect("an account's members are visible to its members only", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const accounts = yield* Accounts.Accounts
        const view = yield* accounts.get(team.principals.member, team.account)
        expect(view.role).toBe("member")
        expect(view.members.map((m) => m.role).sort()).toEqual(["admin", "member", "owner"])
        expect((yield* Effect.flip(accounts.get(team.principals.outsider, team.account)))._tag).toBe("PermissionDenied")
      }))
  })
})

describe("Identity", () => {
  it.layer(TestServices.layer)((it) => {
    it.effect("a bearer token authenticates its user with the user's memberships", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const identity = yield* Identity.Identity
        const principal = yield* identity.authenticate(team.tokens.owner)
        expect(principal.memberships.map((m) => [m.account, m.role])).toEqual([[team.account, "owner"]])
      }))

    it.effect("an unknown, empty or oversized token is refused", () =>
      Effect.gen(function*() {
        const identity = yield* Identity.Identity
        for (const token of ["never-issued", "", "x".repeat(5000)]) {
          expect((yield* Effect.flip(identity.authenticate(token)))._tag).toBe("Unauthenticated")
        }
      }))

    it.effect("an expired token is refused", () =>
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.parse("2026-11-21T12:00:00Z"))
        const identity = yield* Identity.Identity
        const user = Ids.UserId.make(StorageSuite.uniqueName("user"))
        yield* Fixtures.load({ users: [{ id: user, name: "U", tokens: [] }] })
        yield* identity.issue(user, "short-lived", Option.some(DateTime.unsafeMake("2026-11-21T11:59:59Z")))
        yield* identity.issue(user, "long-lived", Option.some(DateTime.unsafeMake("2026-11-21T12:00:01Z")))
        expect((yield* Effect.flip(identity.authenticate("short-lived")))._tag).toBe("Unauthenticated")
        expect((yield* identity.authenticate("long-lived")).user.id).toBe(user)
      }))

    it.effect("tokens are stored only as their SHA-256 hash", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const tokens = yield* Ports.TokenStore
        expect(Option.isNone(yield* tokens.findPrincipal(team.tokens.owner))).toBe(true)
        const hash = yield* Identity.hashToken(team.tokens.owner)
        expect(hash).toMatch(/^[0-9a-f]{64}$/)
        expect(Option.isSome(yield* tokens.findPrincipal(hash))).toBe(true)
      }))
  })
})

describe("Fixtures", () => {
  it.layer(TestServices.layer)((it) => {
    it.effect("loading the same fixtures twice changes nothing", () =>
      Effect.gen(function*() {
        const user = Ids.UserId.make(StorageSuite.uniqueName("user"))
        const account = Ids.AccountName.make(StorageSuite.uniqueName("acct"))
        const fixtures = yield* Fixtures.decode({
          users: [{ id: user, name: "U", tokens: [`${user}-t`] }],
          accounts: [{ name: account, members: [{ user, role: "owner" }] }]
        })
        yield* Fixtures.load(fixtures)
        const store = yield* Ports.AccountStore
        const first = Option.getOrThrow(yield* store.findByName(account))
        yield* Fixtures.load(fixtures)
        expect(Option.getOrThrow(yield* store.findByName(account)).id).toBe(first.id)
        expect(yield* store.membersOf(first.id)).toHaveLength(1)
      }))

    it.effect("unknown keys are an error that names the key", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Fixtures.decode({ users: [], agentz: [] }))
        expect(error.details).toContain("agentz")
        const nested = yield* Effect.flip(Fixtures.decode({ users: [{ id: "a", name: "A", tokenz: [] }] }))
        expect(nested.details).toContain("tokenz")
      }))

    it.effect("a member who is not a user is refused with a message naming both", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(Fixtures.load(yield* Fixtures.decode({
          accounts: [{ name: "lonely", members: [{ user: "ghost", role: "owner" }] }]
        })))
        expect(error.message).toContain("ghost")
        expect(error.message).toContain("lonely")
      }))

    it.effect("deployments of the fixtures are stored; the deploying account then receives the agent's events", () =>
      Effect.gen(function*() {
        const publisher = yield* Seed.team
        const deployer = yield* Seed.team
        yield* Fixtures.load(yield* Fixtures.decode({
          deployments: [{
            id: StorageSuite.uniqueName("dep"),
            account: deployer.account,
            agent: `${publisher.account}/helper`,
            build_id: "b-1",
            namespace: "ns-1",
            status: "running",
            deployed_at: "2026-11-01T10:00:00Z",
            undeployed_at: null,
            spec: {}
          }]
        }))
        const accounts = yield* Ports.AccountStore
        const idOf = (name: Ids.AccountName) => Effect.map(accounts.findByName(name), (a) => Option.getOrThrow(a).id)
        const deploying = yield* (yield* Ports.DeploymentStore).accountsDeploying(yield* idOf(publisher.account), Ids.AgentName.make("helper"))
        expect(deploying).toEqual([yield* idOf(deployer.account)])
        const missing = yield* Effect.flip(Fixtures.load(yield* Fixtures.decode({
          deployments: [{ id: "d-x", account: "ghost-account", agent: "a/b", build_id: "b", namespace: "n", status: "s", deployed_at: "2026-11-01T10:00:00Z" }]
        })))
        expect(missing.message).toContain("ghost-account")
      }))

    it.effect("fixtures load files (bytes in the object store) and traces, twice without change; a bad reference stores nothing", () =>
      Effect.gen(function*() {
        const account = StorageSuite.uniqueName("fx")
        const user = StorageSuite.uniqueName("fx-user")
        const deployment = StorageSuite.uniqueName("fx-dep")
        const fixtures = yield* Fixtures.decode({
          users: [{ id: user, name: "F" }],
          accounts: [{ name: account, members: [{ user, role: "owner" }] }],
          deployments: [{ id: deployment, account, agent: `${account}/helper`, build_id: "b-1", namespace: "ns", status: "running", deployed_at: "2026-11-01T10:00:00Z" }],
          files: [
            { deployment, owner: user, key: "f-notes", filename: "notes.txt", content_type: "text/plain", content: "héllo", status: "ready" },
            { deployment, owner: user, key: "f-pending", filename: "later.txt", content_type: "text/plain", content: "", status: "pending" }
          ],
          traces: [{ agent: `${account}/helper`, trace_id: "t-1", name: "chat", status: "ok", latency_ms: 12.5, input: "hi", output: "hello", timestamp: "2026-11-01T10:00:00Z" }]
        })
        const first = yield* Fixtures.load(fixtures)
        expect([first.files, first.traces]).toEqual([2, 1])
        const files = yield* Ports.FileStore
        const stored = Option.getOrThrow(yield* files.find(Deployment.DeploymentId.make(deployment), "f-notes"))
        expect([stored.filename, stored.size, stored.status]).toEqual(["notes.txt", 6, "ready"])
        const objects = yield* ObjectStore.ObjectStore
        const bytes = yield* Option.getOrThrow(yield* objects.get(Files.objectKey(stored))).pipe(Stream.runCollect)
        expect(new TextDecoder().decode(Buffer.concat([...bytes]))).toBe("héllo")
        yield* Fixtures.load(fixtures)
        expect(Option.getOrThrow(yield* files.find(Deployment.DeploymentId.make(deployment), "f-notes")).created_at).toEqual(stored.created_at)
        const accountId = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(Ids.AccountName.make(account))).id
        const page = yield* (yield* Ports.TraceStore).query({
          publisher_id: accountId, agent_name: Ids.AgentName.make("helper"), account_ids: [accountId], viewer: Ids.UserId.make(user),
          start: Option.none(), end: Option.none(), status: Option.none(), model: Option.none(), after: Option.none(), limit: 10, offset: 0
        })
        expect(page.traces.map((t) => [t.trace_id, t.latency_ms, t.input, t.output])).toEqual([["t-1", 12.5, "hi", "hello"]])
        const ghost = StorageSuite.uniqueName("ghost")
        const missing = yield* Effect.flip(Fixtures.load(yield* Fixtures.decode({
          traces: [{ agent: `${account}/helper`, trace_id: "t-2", name: "chat", status: "ok", latency_ms: 1, input: "", output: "", timestamp: "2026-11-01T10:00:00Z" }],
          files: [{ deployment: ghost, owner: user, key: "f-x", filename: "x.txt", content_type: "text/plain", content: "x", status: "ready" }]
        })))
        expect(missing.message).toContain(ghost)
        expect((yield* (yield* Ports.TraceStore).query({
          publisher_id: accountId, agent_name: Ids.AgentName.make("helper"), account_ids: [accountId], viewer: Ids.UserId.make(user),
          start: Option.none(), end: Option.none(), status: Option.none(), model: Option.none(), after: Option.none(), limit: 10, offset: 0
        })).total).toBe(1)
        const bad = yield* Effect.flip(Fixtures.decode({ traces: [{ agent: "acme/helper", status: "maybe" }] }))
        expect(bad.details).toContain("status")
      }))
  })
})
