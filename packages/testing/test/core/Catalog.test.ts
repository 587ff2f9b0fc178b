/**
 * Use-case tests of the catalog: each names the rule of interface.md (or
 * extensions.md) it checks.
 */
import { describe, expect, it } from "@effect/vitest"
import { Agent, Catalog, Ids, Ports } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { Effect, Option } from "effect"

const agentName = Ids.AgentName.make("helper")
const spec = (extra = "") => `name: helper\ndescription: Helps\n${extra}`

const register = (team: Seed.Team, who: Seed.Person, buildId: string, extra = "") =>
  Effect.flatMap(Catalog.Catalog, (catalog) =>
    catalog.register(team.principals[who], {
      account: team.account,
      name: agentName,
      build_id: Ids.BuildId.make(buildId),
      registry: "ghcr.io/acme",
      spec_content: spec(extra),
      readme: `readme of ${buildId}`
    }))

const publish = (team: Seed.Team, who: Seed.Person, buildId: string, version: string) =>
  Effect.flatMap(Catalog.Catalog, (catalog) =>
    catalog.publish(team.principals[who], {
      account: team.account,
      name: agentName,
      build_id: Ids.BuildId.make(buildId),
      version: Ids.SemVer.make(version)
    }))

const get = (team: Seed.Team, who: Seed.Person | "public") =>
  Effect.flatMap(Catalog.Catalog, (catalog) =>
    catalog.get(who === "public" ? Option.none() : Option.some(team.principals[who]), team.account, agentName))

describe("Catalog", () => {
  it.layer(TestServices.layer)((it) => {
    describe("register", () => {
      it.effect("register needs the account role owner or admin; a member or a non-member gets 403", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          expect((yield* register(team, "owner", "b-1")).created).toBe(true)
          expect((yield* register(team, "admin", "b-2")).created).toBe(true)
          expect((yield* Effect.flip(register(team, "member", "b-3")))._tag).toBe("PermissionDenied")
          expect((yield* Effect.flip(register(team, "outsider", "b-3")))._tag).toBe("PermissionDenied")
        }))

      it.effect("register into an account that does not exist is 404", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const catalog = yield* Catalog.Catalog
          const error = yield* Effect.flip(catalog.register(team.principals.owner, {
            account: Ids.AccountName.make("no-such-account-here"),
            name: agentName,
            build_id: Ids.BuildId.make("b-1"),
            registry: "ghcr.io/acme",
            spec_content: spec()
          }))
          expect(error._tag).toBe("AccountNotFound")
        }))

      it.effect("registering an already existing agent build updates it (same register operation)", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          const again = yield* register(team, "owner", "b-1", "port: 8080\n")
          expect(again.created).toBe(false)
          const agent = yield* get(team, "owner")
          expect(agent.versions).toHaveLength(1)
          expect(agent.versions[0]!.spec["port"]).toBe(8080)
        }))

      it.effect("an unparsable or non-mapping spec is refused with invalid_spec and stores nothing", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const catalog = yield* Catalog.Catalog
          for (const bad of ["name: [unclosed", "- a list\n- not a map", "just text", "a: 1\na: 2"]) {
            const error = yield* Effect.flip(catalog.register(team.principals.owner, {
              account: team.account,
              name: agentName,
              build_id: Ids.BuildId.make("b-bad"),
              registry: "ghcr.io/acme",
              spec_content: bad
            }))
            expect(error._tag).toBe("SpecInvalid")
          }
          expect((yield* Effect.flip(get(team, "owner")))._tag).toBe("AgentNotFound")
        }))

      it.effect("suspicious specs register with validation_warnings instead of failing", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const result = yield* register(team, "owner", "b-1", "image: docker.io/other/x:1\nsurprise: true\nport: 70000\n")
          expect(result.validation_warnings.map((w) => w.code).sort()).toEqual(
            ["image_registry_mismatch", "invalid_port", "unknown_key"]
          )
          const agent = yield* get(team, "owner")
          expect(agent.versions[0]!.validation_warnings).toHaveLength(3)
        }))

      it.effect("register appends an agent.build event to the publisher's stream in the same transaction", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          const log = yield* Ports.EventLog
          const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
          const events = yield* log.after(account.id, Option.none(), 10)
          expect(events.map((e) => [e.type, e.data])).toEqual([
            ["agent.build", { agent: `${team.account}/helper`, build_id: "b-1", status: "registered" }]
          ])
        }))
    })

    describe("publish", () => {
      it.effect("publish needs owner or admin; a member gets 403 and the build stays unpublished", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          expect((yield* Effect.flip(publish(team, "member", "b-1", "1.0.0")))._tag).toBe("PermissionDenied")
          expect((yield* Effect.flip(publish(team, "outsider", "b-1", "1.0.0")))._tag).toBe("PermissionDenied")
          expect((yield* Effect.flip(get(team, "public")))._tag).toBe("AgentNotFound")
          expect((yield* publish(team, "admin", "b-1", "1.0.0")).created).toBe(true)
        }))

      it.effect("a published build becomes publicly visible in the catalog", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          yield* register(team, "owner", "b-2")
          yield* publish(team, "owner", "b-1", "1.0.0")
          const publicView = yield* get(team, "public")
          expect(publicView.versions.map((v) => [v.build_id, v.version])).toEqual([["b-1", "1.0.0"]])
          const catalog = yield* Catalog.Catalog
          const listed = yield* catalog.list({ q: Option.some(team.account), limit: 10, offset: 0 })
          expect(listed.agents.map((a) => [a.name, a.latest_version])).toEqual([["helper", "1.0.0"]])
        }))

      it.effect("publishing a version already used by another build is refused with version_already_published", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          yield* register(team, "owner", "b-2")
          yield* publish(team, "owner", "b-1", "1.0.0")
          const error = yield* Effect.flip(publish(team, "owner", "b-2", "1.0.0"))
          expect(error._tag).toBe("VersionAlreadyPublished")
          expect(error.code).toBe("version_already_published")
        }))

      it.effect("publishing the same version again for the same build is idempotent", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          const first = yield* publish(team, "owner", "b-1", "1.2.3")
          const second = yield* publish(team, "owner", "b-1", "1.2.3")
          expect([first.created, second.created]).toEqual([true, false])
          const agent = yield* get(team, "public")
          expect(agent.versions.map((v) => v.version)).toEqual(["1.2.3"])
        }))

      it.effect("a build already published under another version is refused with build_already_published", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          yield* publish(team, "owner", "b-1", "1.0.0")
          const error = yield* Effect.flip(publish(team, "owner", "b-1", "1.0.1"))
          expect(error._tag).toBe("BuildAlreadyPublished")
        }))

      it.effect("publishing an unknown agent or build is 404", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          expect((yield* Effect.flip(publish(team, "owner", "b-1", "1.0.0")))._tag).toBe("AgentNotFound")
          yield* register(team, "owner", "b-1")
          expect((yield* Effect.flip(publish(team, "owner", "nope", "1.0.0")))._tag).toBe("BuildNotFound")
        }))

      it.effect("publish keeps the version when the build is registered again", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          yield* publish(team, "owner", "b-1", "2.0.0")
          yield* register(team, "owner", "b-1", "port: 9000\n")
          const agent = yield* get(team, "public")
          expect(agent.versions.map((v) => [v.version, v.spec["port"]])).toEqual([["2.0.0", 9000]])
        }))
    })

    describe("read", () => {
      it.effect("public callers see only published versions; authenticated account members see all builds", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          yield* register(team, "owner", "b-2")
          yield* publish(team, "owner", "b-1", "1.0.0")
          expect((yield* get(team, "public")).versions.map((v) => v.build_id)).toEqual(["b-1"])
          expect((yield* get(team, "outsider")).versions.map((v) => v.build_id)).toEqual(["b-1"])
          const memberView = yield* get(team, "member")
          expect(memberView.versions.map((v) => [v.build_id, v.version])).toEqual([["b-2", undefined], ["b-1", "1.0.0"]])
        }))

      it.effect("published versions are listed highest semver first for the public", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          for (const [build, version] of [["b-1", "1.9.0"], ["b-2", "1.10.0"], ["b-3", "0.1.0"]] as const) {
            yield* register(team, "owner", build)
            yield* publish(team, "owner", build, version)
          }
          expect((yield* get(team, "public")).versions.map((v) => v.version)).toEqual(["1.10.0", "1.9.0", "0.1.0"])
        }))

      it.effect("an agent with no published version does not exist for the public (404)", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          yield* register(team, "owner", "b-1")
          expect((yield* Effect.flip(get(team, "public")))._tag).toBe("AgentNotFound")
          expect((yield* get(team, "member")).versions).toHaveLength(1)
        }))

      it.effect("the agent list shows only agents having at least one published version", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const catalog = yield* Catalog.Catalog
          yield* register(team, "owner", "b-1")
          expect((yield* catalog.list({ q: Option.some(team.account), limit: 10, offset: 0 })).total).toBe(0)
          yield* publish(team, "owner", "b-1", "0.1.0")
          expect((yield* catalog.list({ q: Option.some(team.account), limit: 10, offset: 0 })).total).toBe(1)
        }))
    })

    describe("config", () => {
      it.effect("config gives members the latest build and others the latest published version, with env names but not values", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const catalog = yield* Catalog.Catalog
          yield* register(team, "owner", "b-1", "env:\n  MODE: fast\n")
          yield* publish(team, "owner", "b-1", "1.0.0")
          yield* register(team, "owner", "b-2")
          const forMember = yield* catalog.config(team.principals.member, team.account, agentName)
          expect([forMember.build_id, forMember.version]).toEqual(["b-2", undefined])
          expect(forMember.image).toBe("ghcr.io/acme/helper:b-2")
          const forOutsider = yield* catalog.config(team.principals.outsider, team.account, agentName)
          expect([forOutsider.build_id, forOutsider.version, forOutsider.env]).toEqual(["b-1", "1.0.0", { MODE: Agent.hiddenEnvValue }])
          const forMemberOfB1 = yield* catalog.get(Option.some(team.principals.member), team.account, agentName)
          expect(forMemberOfB1.versions.find((v) => v.build_id === "b-1")?.spec["env"]).toEqual({ MODE: "fast" })
        }))

      it.effect("config of an agent that a non-member cannot see is 404", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const catalog = yield* Catalog.Catalog
          yield* register(team, "owner", "b-1")
          const error = yield* Effect.flip(catalog.config(team.principals.outsider, team.account, agentName))
          expect(error._tag).toBe("AgentNotFound")
        }))
    })
  })
})
