/**
 * Releases over HTTP (issue 28), on the fake cluster: semver ranges and
 * channels in deploys, channels themselves, yanks, and deployments that
 * follow a range or a channel forward. Each test names the rule it checks.
 */
import { describe, expect, it } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, Option } from "effect"
import { expectErrorBody, layer, raw, registerBody } from "./HttpTestServer.js"

/** Registers a build of `helper` and, with a version, publishes it. */
const build = (team: Seed.Team, id: string, version?: string, name = "helper") =>
  Effect.gen(function*() {
    const r = yield* raw("POST", `/agents/${team.account}/${name}/register`, {
      token: team.tokens.owner,
      json: registerBody(id, { spec_content: `name: ${name}\ndescription: d\nport: 8080\n` })
    })
    expect(r.status).toBe(201)
    if (version !== undefined) {
      const p = yield* raw("POST", `/agents/${team.account}/${name}/publish`, { token: team.tokens.owner, json: { build_id: id, version } })
      expect(p.status).toBe(201)
    }
  })

const deploy = (team: Seed.Team, body: Record<string, unknown>, publisher = team) =>
  raw("POST", `/agents/${publisher.account}/helper/deployments`, { token: team.tokens.owner, json: body })

const setChannel = (team: Seed.Team, channel: string, version: string, who: Seed.Person = "owner") =>
  raw("PUT", `/agents/${team.account}/helper/channels/${channel}`, { token: team.tokens[who], json: { version } })

const yank = (team: Seed.Team, version: string, reason: string) =>
  raw("POST", `/agents/${team.account}/helper/versions/${version}/yank`, { token: team.tokens.owner, json: { reason } })

const history = (team: Seed.Team, publisher = team) =>
  Effect.map(
    raw("GET", `/agents/${publisher.account}/helper/deployment/history`, { token: team.tokens.owner }),
    (r) => r.body.deployments as ReadonlyArray<Record<string, any>>
  )

/** The events of an account's stream after the first `skip`. */
const eventsOf = (team: Seed.Team, skip = 0) =>
  Effect.gen(function*() {
    const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
    return (yield* (yield* Ports.EventLog).after(account.id, Option.none(), 1000)).slice(skip)
  })

describe("HTTP: releases (issue 28)", () => {
  it.layer(layer())((it) => {
    it.effect("a deploy's version may be a semver range: its newest published match is deployed; none is 404 no_matching_version naming the range", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* build(team, "b-100", "1.0.0")
        yield* build(team, "b-140", "1.4.0")
        yield* build(team, "b-141", "1.4.1")
        yield* build(team, "b-200", "2.0.0")
        const cases: ReadonlyArray<readonly [string, string]> = [["^1.0", "b-141"], ["~1.4.0", "b-141"], [">=1 <1.4", "b-100"], ["1.x", "b-141"], ["*", "b-200"]]
        for (const [range, expected] of cases) {
          const r = yield* deploy(team, { version: range })
          expect(r.status, range).toBe(201)
          expect(r.body.build_id, range).toBe(expected)
        }
        const none = yield* deploy(team, { version: "^3" })
        expect(none.status).toBe(404)
        expectErrorBody(none.body, "no_matching_version")
        expect(none.body.details).toContain("^3")
        // An exact version keeps its own answer.
        const exact = yield* deploy(team, { version: "1.3.0" })
        expect(exact.status).toBe(404)
        expectErrorBody(exact.body, "version_not_found")
      }))

    it.effect("channels are named pointers to published versions: set, read (latest implicit, first), moved, removed; latest cannot be set", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* build(team, "b-1", "1.0.0")
        yield* build(team, "b-2", "1.1.0")
        const set = yield* setChannel(team, "stable", "1.0.0")
        expect(set.status).toBe(200)
        expect(set.body).toMatchObject({ name: "stable", version: "1.0.0", build_id: "b-1", implicit: false })
        yield* setChannel(team, "beta", "1.1.0")
        // Anyone may read them, as they may read the agent.
        const read = yield* raw("GET", `/agents/${team.account}/helper/channels`)
        expect(read.status).toBe(200)
        expect(read.body.channels.map((c: any) => [c.name, c.version, c.implicit])).toEqual([
          ["latest", "1.1.0", true],
          ["beta", "1.1.0", false],
          ["stable", "1.0.0", false]
        ])
        const moved = yield* setChannel(team, "stable", "1.1.0")
        expect(moved.body).toMatchObject({ name: "stable", version: "1.1.0", build_id: "b-2" })
        const latest = yield* setChannel(team, "latest", "1.0.0")
        expect(latest.status).toBe(400)
        expectErrorBody(latest.body, "invalid_request")
        const unpublished = yield* setChannel(team, "stable", "9.9.9")
        expect(unpublished.status).toBe(404)
        expectErrorBody(unpublished.body, "version_not_found")
        const byMember = yield* setChannel(team, "stable", "1.0.0", "member")
        expect(byMember.status).toBe(403)
        const removed = yield* raw("DELETE", `/agents/${team.account}/helper/channels/beta`, { token: team.tokens.admin })
        expect(removed.status).toBe(200)
        const again = yield* raw("DELETE", `/agents/${team.account}/helper/channels/beta`, { token: team.tokens.admin })
        expect(again.status).toBe(404)
        expectErrorBody(again.body, "channel_not_found")
        const after = yield* raw("GET", `/agents/${team.account}/helper/channels`)
        expect(after.body.channels.map((c: any) => [c.name, c.version])).toEqual([["latest", "1.1.0"], ["stable", "1.1.0"]])
        // Deploying through a channel runs its version; one that does not exist is 404.
        expect((yield* deploy(team, { channel: "stable" })).body.build_id).toBe("b-2")
        const missing = yield* deploy(team, { channel: "nightly" })
        expect(missing.status).toBe(404)
        expectErrorBody(missing.body, "channel_not_found")
        const both = yield* deploy(team, { channel: "stable", version: "1.0.0" })
        expect(both.status).toBe(400)
        // Moving channels is audited.
        const audit = yield* raw("GET", `/accounts/${team.account}/audit?limit=10`, { token: team.tokens.owner })
        expect(audit.body.entries.map((e: any) => e.action)).toEqual(expect.arrayContaining(["agent.channel_set", "agent.channel_removed"]))
      }))

    it.effect("a yanked version is skipped by ranges and latest, refused by channels and exact deploys, marked in the catalog; undoing the yank restores it", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* build(team, "b-1", "1.0.0")
        yield* build(team, "b-2", "1.1.0")
        const yanked = yield* yank(team, "1.1.0", "leaks memory under load")
        expect(yanked.status).toBe(200)
        expect(yanked.body).toMatchObject({ version: "1.1.0", yanked: { reason: "leaks memory under load" } })
        expect((yield* deploy(team, { version: "^1" })).body.build_id).toBe("b-1")
        expect((yield* deploy(team, {})).body.build_id).toBe("b-1")
        const exact = yield* deploy(team, { version: "1.1.0" })
        expect(exact.status).toBe(409)
        expectErrorBody(exact.body, "version_yanked")
        expect(exact.body.details).toContain("leaks memory under load")
        const channel = yield* setChannel(team, "stable", "1.1.0")
        expect(channel.status).toBe(409)
        expectErrorBody(channel.body, "version_yanked")
        // The public catalog shows it, with the reason; its latest is the newest version not yanked.
        const agent = yield* raw("GET", `/agents/${team.account}/helper`)
        expect(agent.body.versions.find((v: any) => v.version === "1.1.0").yanked.reason).toBe("leaks memory under load")
        expect(agent.body.versions.find((v: any) => v.version === "1.0.0").yanked).toBeUndefined()
        const listed = yield* raw("GET", `/agents?q=${team.account}`)
        expect(listed.body.agents[0]).toMatchObject({ latest_version: "1.0.0", latest_build_id: "b-1" })
        // A member may not yank; a version never published is 404.
        const byMember = yield* raw("POST", `/agents/${team.account}/helper/versions/1.0.0/yank`, { token: team.tokens.member, json: { reason: "x" } })
        expect(byMember.status).toBe(403)
        const unknown = yield* yank(team, "7.0.0", "x")
        expect(unknown.status).toBe(404)
        expectErrorBody(unknown.body, "version_not_found")
        const undone = yield* raw("DELETE", `/agents/${team.account}/helper/versions/1.1.0/yank`, { token: team.tokens.owner })
        expect(undone.status).toBe(200)
        expect(undone.body.yanked).toBeUndefined()
        expect((yield* deploy(team, { version: "^1" })).body.build_id).toBe("b-2")
      }))

    it.effect("a deployment running a version that is yanked keeps running and gets deployment.changed with a warning", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* build(team, "b-1", "1.0.0")
        const dep = (yield* deploy(team, { version: "1.0.0" })).body
        const before = (yield* eventsOf(team)).length
        yield* yank(team, "1.0.0", "wrong model")
        const events = yield* eventsOf(team, before)
        const changed = events.filter((e) => e.type === "deployment.changed")
        expect(changed).toHaveLength(1)
        expect(changed[0]!.data).toMatchObject({ deployment_id: dep.id, status: "pending" })
        expect(changed[0]!.data["warning"]).toContain("wrong model")
        expect(events.some((e) => e.type === "agent.build" && e.data["status"] === "yanked" && e.data["reason"] === "wrong model")).toBe(true)
        const still = yield* raw("GET", `/deployments/${dep.id}`, { token: team.tokens.owner })
        expect(still.body).toMatchObject({ status: "pending", undeployed_at: null })
      }))

    it.effect("a deployment that follows a range rolls forward when a newer match is published, and not for one outside the range", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* build(team, "b-1", "1.0.0")
        const first = yield* deploy(team, { version: "^1", follow: true })
        expect(first.status).toBe(201)
        expect(first.body.follow).toEqual({ range: "^1" })
        yield* build(team, "b-2", "2.0.0")
        expect((yield* history(team))[0]!["id"]).toBe(first.body.id)
        yield* build(team, "b-3", "1.2.0")
        const [now, was] = yield* history(team)
        expect(now).toMatchObject({ build_id: "b-3", status: "pending", follow: { range: "^1" }, rolled_forward_from: first.body.id })
        expect(was).toMatchObject({ id: first.body.id, status: "superseded" })
        // A version yanked and restored: followers move to it when the yank is undone.
        yield* yank(team, "1.2.0", "bad")
        yield* build(team, "b-4", "1.3.0")
        yield* yank(team, "1.3.0", "bad too")
        expect((yield* history(team))[0]!["build_id"]).toBe("b-4")
        const ids = (yield* history(team)).map((d) => d["build_id"])
        expect(ids).toEqual(["b-4", "b-3", "b-1"])
        yield* raw("DELETE", `/agents/${team.account}/helper/versions/1.3.0/yank`, { token: team.tokens.owner })
        expect((yield* history(team)).length).toBe(3)
        // An exact version never moves: following it is refused; so is following a build.
        const exact = yield* deploy(team, { version: "1.0.0", follow: true })
        expect(exact.status).toBe(400)
        expectErrorBody(exact.body, "invalid_request")
        const byBuild = yield* deploy(team, { build_id: "b-1", follow: true })
        expect(byBuild.status).toBe(400)
      }))

    it.effect("a deployment of another account that follows a channel rolls forward when it moves; deployment.changed reaches the deploying and the publishing account", () =>
      Effect.gen(function*() {
        const publisher = yield* Seed.team
        const deployer = yield* Seed.team
        yield* build(publisher, "b-1", "1.0.0")
        yield* build(publisher, "b-2", "1.1.0")
        yield* setChannel(publisher, "stable", "1.0.0")
        const first = yield* deploy(deployer, { channel: "stable", follow: true, into: deployer.account }, publisher)
        expect(first.status).toBe(201)
        expect(first.body).toMatchObject({ build_id: "b-1", follow: { channel: "stable" } })
        const publisherBefore = (yield* eventsOf(publisher)).length
        const deployerBefore = (yield* eventsOf(deployer)).length
        yield* setChannel(publisher, "stable", "1.1.0")
        const [now, was] = yield* history(deployer, publisher)
        expect(now).toMatchObject({ build_id: "b-2", account: deployer.account, follow: { channel: "stable" }, rolled_forward_from: first.body.id })
        expect(was).toMatchObject({ id: first.body.id, status: "superseded" })
        for (const [team, before] of [[publisher, publisherBefore], [deployer, deployerBefore]] as const) {
          const changed = (yield* eventsOf(team, before)).filter((e) => e.type === "deployment.changed" && e.data["status"] === "pending")
          expect(changed.map((e) => [e.data["deployment_id"], e.data["rolled_forward_from"], e.data["follow"]])).toEqual([
            [now!["id"], first.body.id, "channel stable"]
          ])
        }
        // The deploying account's audit log says why.
        const audit = yield* raw("GET", `/accounts/${deployer.account}/audit?limit=5`, { token: deployer.tokens.owner })
        expect(audit.body.entries[0].details).toContain(`Rolled ${first.body.id} forward along its channel stable`)
        // Removing the channel leaves the deployment running, with a warning.
        const before = (yield* eventsOf(deployer)).length
        yield* raw("DELETE", `/agents/${publisher.account}/helper/channels/stable`, { token: publisher.tokens.owner })
        const warned = (yield* eventsOf(deployer, before)).filter((e) => e.type === "deployment.changed")
        expect(warned.map((e) => e.data["deployment_id"])).toEqual([now!["id"]])
        expect(warned[0]!.data["warning"]).toContain("was removed")
      }))

    it.effect("a rollback pins the deployment: it no longer follows", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* build(team, "b-1", "1.0.0")
        yield* deploy(team, { version: "^1", follow: true })
        yield* build(team, "b-2", "1.1.0")
        const [rolledForward] = yield* history(team)
        const back = yield* raw("POST", `/deployments/${rolledForward!["id"]}/rollback`, { token: team.tokens.owner, json: {} })
        expect(back.status).toBe(201)
        expect(back.body.build_id).toBe("b-1")
        expect(back.body.follow).toBeUndefined()
        yield* build(team, "b-3", "1.2.0")
        expect((yield* history(team))[0]!["id"]).toBe(back.body.id)
      }))
  })
})
