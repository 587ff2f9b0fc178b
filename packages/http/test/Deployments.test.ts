/**
 * The deployment routes over HTTP, on the fake cluster: each test names the
 * rule of interface.md or extensions.md it checks.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cluster, Deployment, Ports, Rollouts } from "@hosting/core"
import { RolloutControl, Seed } from "@hosting/testing"
import { Effect, Option, TestClock } from "effect"
import { expectErrorBody, layer, raw, registerBody } from "./HttpTestServer.js"

/** Registers builds of an agent and publishes some of them. */
const agentWith = (team: Seed.Team, name: string, builds: ReadonlyArray<readonly [string, string?]>) =>
  Effect.forEach(builds, ([build, version]) =>
    Effect.gen(function*() {
      const spec = `name: ${name}\ndescription: d\nport: 8080\nenv:\n  MODE: fast\n`
      const r = yield* raw("POST", `/agents/${team.account}/${name}/register`, {
        token: team.tokens.owner,
        json: registerBody(build, { spec_content: spec })
      })
      expect(r.status).toBe(201)
      if (version) {
        const p = yield* raw("POST", `/agents/${team.account}/${name}/publish`, {
          token: team.tokens.owner,
          json: { build_id: build, version }
        })
        expect(p.status).toBe(201)
      }
    }))

const deploy = (team: Seed.Team, who: Seed.Person, agent: string, body: Record<string, unknown> = {}, publisher = team) =>
  raw("POST", `/agents/${publisher.account}/${agent}/deployments`, { token: team.tokens[who], json: body })

describe("HTTP: deployments", () => {
  it.layer(layer())((it) => {
    it.effect("deploy without a version deploys the latest published version and answers 201 with the record", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"], ["b-2", "1.1.0"], ["b-3"]])
        const r = yield* deploy(team, "admin", "helper")
        expect(r.status).toBe(201)
        expect(r.body).toMatchObject({
          account: team.account,
          agent: `${team.account}/helper`,
          agent_name: "helper",
          build_id: "b-2",
          namespace: `${team.account}-helper`,
          status: "pending",
          undeployed_at: null,
          spec: { name: "helper", port: 8080 }
        })
        expect(r.body.id).toMatch(/^dep-/)
        expect(Date.parse(r.body.deployed_at)).not.toBeNaN()
        const cluster = yield* Cluster.Cluster
        const pods = yield* cluster.listPods(r.body.namespace)
        expect(pods.length).toBe(1)
      }))

    it.effect("deploy takes a build_id (even unpublished, for the agent's own account) or a version; a mismatch is 400", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"], ["b-2"]])
        expect((yield* deploy(team, "owner", "helper", { build_id: "b-2" })).body.build_id).toBe("b-2")
        expect((yield* deploy(team, "owner", "helper", { version: "1.0.0" })).body.build_id).toBe("b-1")
        expect((yield* deploy(team, "owner", "helper", { build_id: "b-1", version: "1.0.0" })).status).toBe(201)
        const mismatch = yield* deploy(team, "owner", "helper", { build_id: "b-2", version: "1.0.0" })
        expect(mismatch.status).toBe(400)
        expectErrorBody(mismatch.body, "invalid_request")
        const noVersion = yield* deploy(team, "owner", "helper", { version: "9.9.9" })
        expect(noVersion.status).toBe(404)
        expectErrorBody(noVersion.body, "version_not_found")
        const noBuild = yield* deploy(team, "owner", "helper", { build_id: "b-404" })
        expect(noBuild.status).toBe(404)
        expectErrorBody(noBuild.body, "build_not_found")
        const bad = yield* deploy(team, "owner", "helper", { version: "one point oh" })
        expect(bad.status).toBe(400)
        expectErrorBody(bad.body, "invalid_request")
      }))

    it.effect("deploy with nothing published and no build_id is 404 version_not_found", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1"]])
        const r = yield* deploy(team, "owner", "helper")
        expect(r.status).toBe(404)
        expectErrorBody(r.body, "version_not_found")
      }))

    it.effect("deploy needs owner or admin of the deploying account: a member or an outsider gets 403, no token 401", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        for (const who of ["member", "outsider"] as const) {
          const r = yield* deploy(team, who, "helper")
          expect(r.status).toBe(403)
          expectErrorBody(r.body, "forbidden")
        }
        expect((yield* raw("POST", `/agents/${team.account}/helper/deployments`, { json: {} })).status).toBe(401)
        const history = yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.owner })
        expect(history.body).toEqual({ deployments: [], count: 0 })
      }))

    it.effect("a published agent of another account may be deployed `into` one's own account, from a published version only", () =>
      Effect.gen(function*() {
        const publisher = yield* Seed.team
        const deployer = yield* Seed.team
        yield* agentWith(publisher, "helper", [["b-1", "1.0.0"], ["b-2"]])
        yield* agentWith(publisher, "secret", [["s-1"]])
        const ok = yield* deploy(deployer, "owner", "helper", { into: deployer.account }, publisher)
        expect(ok.status).toBe(201)
        expect(ok.body).toMatchObject({
          account: deployer.account,
          agent: `${publisher.account}/helper`,
          build_id: "b-1",
          namespace: `${deployer.account}-${publisher.account}-helper`
        })
        const unpublished = yield* deploy(deployer, "owner", "helper", { into: deployer.account, build_id: "b-2" }, publisher)
        expect(unpublished.status).toBe(404)
        const hidden = yield* deploy(deployer, "owner", "secret", { into: deployer.account }, publisher)
        expect(hidden.status).toBe(404)
        expectErrorBody(hidden.body, "agent_not_found")
        const intoOthers = yield* deploy(deployer, "owner", "helper", { into: publisher.account }, publisher)
        expect(intoOthers.status).toBe(403)
        const notInto = yield* deploy(deployer, "owner", "helper", {}, publisher)
        expect(notInto.status).toBe(403)
      }))

    it.effect("history lists, most recent first with count, the deployments the caller's accounts made; anyone else gets 403", () =>
      Effect.gen(function*() {
        const publisher = yield* Seed.team
        const deployer = yield* Seed.team
        const stranger = yield* Seed.team
        yield* agentWith(publisher, "helper", [["b-1", "1.0.0"], ["b-2", "2.0.0"]])
        const first = yield* deploy(publisher, "owner", "helper", { version: "1.0.0" })
        yield* TestClock.adjust("1 minute")
        const second = yield* deploy(publisher, "owner", "helper", { version: "2.0.0" })
        const theirs = yield* deploy(deployer, "owner", "helper", { into: deployer.account }, publisher)
        const path = `/agents/${publisher.account}/helper/deployment/history`
        const own = yield* raw("GET", path, { token: publisher.tokens.member })
        expect(own.status).toBe(200)
        expect(own.body.count).toBe(2)
        expect(own.body.deployments.map((d: any) => [d.id, d.status])).toEqual([
          [second.body.id, "pending"],
          [first.body.id, "superseded"]
        ])
        const deployers = yield* raw("GET", path, { token: deployer.tokens.member })
        expect(deployers.body.deployments.map((d: any) => d.id)).toEqual([theirs.body.id])
        const refused = yield* raw("GET", path, { token: stranger.tokens.owner })
        expect(refused.status).toBe(403)
        expectErrorBody(refused.body, "forbidden")
        expect((yield* raw("GET", path)).status).toBe(401)
      }))

    it.effect("history after the account is renamed: under the new name the same deployments, under the old name 403", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const deployed = yield* deploy(team, "owner", "helper")
        const path = (account: string) => `/agents/${account}/helper/deployment/history`
        // Read once so that the member's principal, with the membership's name, is kept.
        expect((yield* raw("GET", path(team.account), { token: team.tokens.member })).body.count).toBe(1)
        const renamed = `${team.account}-renamed`
        expect((yield* raw("PUT", `/accounts/${team.account}`, { token: team.tokens.owner, json: { name: renamed } })).status).toBe(200)
        const now = yield* raw("GET", path(renamed), { token: team.tokens.member })
        expect(now.status).toBe(200)
        expect(now.body.deployments.map((d: any) => d.id)).toEqual([deployed.body.id])
        const before = yield* raw("GET", path(team.account), { token: team.tokens.member })
        expect(before.status).toBe(403)
        expectErrorBody(before.body, "forbidden")
      }))

    it.effect("the configuration map read verifies the `account` query parameter against the namespace", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const other = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const { body: dep } = yield* deploy(team, "owner", "helper")
        const path = `/deployments/${dep.namespace}/configmap/helper-config`
        const read = yield* raw("GET", `${path}?account=${team.account}`, { token: team.tokens.member })
        expect(read.status).toBe(200)
        expect(read.body).toMatchObject({ name: "helper-config", namespace: dep.namespace, data: { MODE: "fast" } })
        expect(read.body.data["agent.yaml"]).toContain("name: helper")
        const missingAccount = yield* raw("GET", path, { token: team.tokens.member })
        expect(missingAccount.status).toBe(400)
        expectErrorBody(missingAccount.body, "invalid_request")
        const otherAccount = yield* raw("GET", `${path}?account=${other.account}`, { token: other.tokens.owner })
        expect(otherAccount.status).toBe(403)
        const notMember = yield* raw("GET", `${path}?account=${team.account}`, { token: team.tokens.outsider })
        expect(notMember.status).toBe(403)
        const noMap = yield* raw("GET", `/deployments/${dep.namespace}/configmap/nothing?account=${team.account}`, {
          token: team.tokens.member
        })
        expect(noMap.status).toBe(404)
        expectErrorBody(noMap.body, "configmap_not_found")
        const noNamespace = yield* raw("GET", `/deployments/no-such-namespace/configmap/x?account=${team.account}`, {
          token: team.tokens.member
        })
        expect(noNamespace.status).toBe(404)
        expect((yield* raw("GET", `${path}?account=${team.account}`)).status).toBe(401)
      }))

    it.effect("pod restart deletes the pod so that the cluster recreates it; ownership is verified like the ConfigMap read", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const other = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const { body: dep } = yield* deploy(team, "owner", "helper")
        const cluster = yield* Cluster.Cluster
        const [pod] = yield* cluster.listPods(dep.namespace)
        const path = `/deployments/${dep.namespace}/pods/${pod!.name}/restart`
        expect((yield* raw("POST", `${path}?account=${other.account}`, { token: other.tokens.owner })).status).toBe(403)
        expect((yield* raw("POST", path, { token: team.tokens.member })).status).toBe(400)
        const restarted = yield* raw("POST", `${path}?account=${team.account}`, { token: team.tokens.member })
        expect(restarted.status).toBe(200)
        expect(restarted.body).toEqual({ status: "restarting", pod: pod!.name })
        const after = yield* cluster.listPods(dep.namespace)
        expect(after.length).toBe(1)
        expect(after[0]!.name).not.toBe(pod!.name)
        const again = yield* raw("POST", `${path}?account=${team.account}`, { token: team.tokens.member })
        expect(again.status).toBe(404)
        expectErrorBody(again.body, "pod_not_found")
      }))

    it.effect("undeploy removes the cluster objects and ends the record; again changes nothing; members may not", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const { body: dep } = yield* deploy(team, "owner", "helper")
        const member = yield* raw("DELETE", `/deployments/${dep.id}`, { token: team.tokens.member })
        expect(member.status).toBe(403)
        const outsider = yield* raw("DELETE", `/deployments/${dep.id}`, { token: team.tokens.outsider })
        expect(outsider.status).toBe(404)
        const gone = yield* raw("DELETE", `/deployments/${dep.id}`, { token: team.tokens.admin })
        expect(gone.status).toBe(200)
        expect(gone.body).toMatchObject({ id: dep.id, status: "undeployed" })
        expect(gone.body.undeployed_at).not.toBeNull()
        const cluster = yield* Cluster.Cluster
        expect(yield* cluster.listPods(dep.namespace)).toEqual([])
        const read = yield* raw("GET", `/deployments/${dep.namespace}/configmap/helper-config?account=${team.account}`, {
          token: team.tokens.member
        })
        expect(read.status).toBe(404)
        const again = yield* raw("DELETE", `/deployments/${dep.id}`, { token: team.tokens.owner })
        expect(again.status).toBe(200)
        expect(again.body.undeployed_at).toBe(gone.body.undeployed_at)
        const one = yield* raw("GET", `/deployments/${dep.id}`, { token: team.tokens.member })
        expect(one.body).toMatchObject({ id: dep.id, status: "undeployed" })
        expect((yield* raw("DELETE", "/deployments/dep-nothing", { token: team.tokens.owner })).status).toBe(404)
      }))

    it.effect("rollback (issue 28) returns the namespace to the build before, or to a named build or version of its history, as a new deployment that names the one it rolled back", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"], ["b-2", "1.1.0"], ["b-3", "1.2.0"], ["b-4", "1.3.0"]])
        const first = (yield* deploy(team, "owner", "helper", { version: "1.0.0" })).body
        // The first deployment has nothing to return to.
        const nothing = yield* raw("POST", `/deployments/${first.id}/rollback`, { token: team.tokens.owner, json: {} })
        expect(nothing.status).toBe(409)
        expectErrorBody(nothing.body, "nothing_to_roll_back")
        expect(nothing.body.details).toContain("no earlier build")
        yield* deploy(team, "owner", "helper", { version: "1.1.0" })
        yield* deploy(team, "owner", "helper", { version: "1.1.0" }) // the same build again is not a build to return to
        const third = (yield* deploy(team, "owner", "helper", { version: "1.2.0" })).body
        const members = yield* raw("POST", `/deployments/${third.id}/rollback`, { token: team.tokens.member, json: {} })
        expect(members.status).toBe(403)
        expect((yield* raw("POST", `/deployments/${third.id}/rollback`, { token: team.tokens.outsider, json: {} })).status).toBe(404)

        const back = yield* raw("POST", `/deployments/${third.id}/rollback`, { token: team.tokens.admin, json: {} })
        expect(back.status).toBe(201)
        expect(back.body).toMatchObject({ build_id: "b-2", status: "pending", namespace: third.namespace, rolled_back_from: third.id })
        expect(back.body.id).not.toBe(third.id)
        // The rolled-back deployment is superseded; the history shows both, the rollback first.
        const history = (yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.member })).body
        expect(history.deployments.slice(0, 2).map((d: any) => [d.id, d.status, d.rolled_back_from])).toEqual([
          [back.body.id, "pending", third.id],
          [third.id, "superseded", undefined]
        ])
        const cluster = yield* Cluster.Cluster
        expect((yield* cluster.listPods(third.namespace)).length).toBe(1)

        // To a named build, or version, of the history; one never deployed here is refused and changes nothing.
        const toFirst = yield* raw("POST", `/deployments/${back.body.id}/rollback`, { token: team.tokens.owner, json: { version: "1.0.0" } })
        expect(toFirst.status).toBe(201)
        expect(toFirst.body).toMatchObject({ build_id: "b-1", rolled_back_from: back.body.id })
        const never = yield* raw("POST", `/deployments/${toFirst.body.id}/rollback`, { token: team.tokens.owner, json: { build_id: "b-4" } })
        expect(never.status).toBe(409)
        expect(never.body.details).toContain("was never deployed")
        const unknown = yield* raw("POST", `/deployments/${toFirst.body.id}/rollback`, { token: team.tokens.owner, json: { version: "9.9.9" } })
        expect(unknown.status).toBe(404)
        const mismatch = yield* raw("POST", `/deployments/${toFirst.body.id}/rollback`, {
          token: team.tokens.owner,
          json: { build_id: "b-2", version: "1.0.0" }
        })
        expect(mismatch.status).toBe(400)
        const after = (yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.member })).body
        expect(after.deployments[0]).toMatchObject({ id: toFirst.body.id, status: "pending" })
        expect(after.count).toBe(history.count + 1)

        // The account's stream and audit log say it was a rollback.
        const accounts = yield* Ports.AccountStore
        const log = yield* Ports.EventLog
        const account = Option.getOrThrow(yield* accounts.findByName(team.account))
        const events = yield* log.after(account.id, Option.none(), 1000)
        expect(events.filter((e) => e.data["rolled_back_from"] !== undefined).map((e) => [e.data["deployment_id"], e.data["rolled_back_from"]]))
          .toEqual([[back.body.id, third.id], [toFirst.body.id, back.body.id]])
        const audit = yield* raw("GET", `/accounts/${team.account}/audit`, { token: team.tokens.owner })
        expect(audit.body.entries.some((e: any) => e.details.startsWith(`Rolled ${third.id} back`))).toBe(true)
      }))

    it.effect("deploy and undeploy append deployment.changed to the deploying account's stream", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const accounts = yield* Ports.AccountStore
        const log = yield* Ports.EventLog
        const account = Option.getOrThrow(yield* accounts.findByName(team.account))
        const before = yield* log.after(account.id, Option.none(), 1000)
        const { body: dep } = yield* deploy(team, "owner", "helper")
        yield* raw("DELETE", `/deployments/${dep.id}`, { token: team.tokens.owner })
        const after = (yield* log.after(account.id, Option.none(), 1000)).slice(before.length)
        expect(after.map((e) => [e.type, e.data["status"], e.data["deployment_id"]])).toEqual([
          ["deployment.changed", "pending", dep.id],
          ["deployment.changed", "undeployed", dep.id]
        ])
        expect(after[0]!.data).toMatchObject({ agent: `${team.account}/helper`, build_id: "b-1", namespace: dep.namespace })
      }))

    it.effect("a deployment's status follows its rollout: pending at deploy, then progressing and available, each with deployment.changed", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
        const log = yield* Ports.EventLog
        const before = (yield* log.after(account.id, Option.none(), 1000)).length
        const { body: dep } = yield* deploy(team, "owner", "helper")
        expect(dep).toMatchObject({ status: "pending" })
        expect(dep.status_reason).toBeUndefined()
        const rollouts = yield* Rollouts.Rollouts
        const get = Effect.map(raw("GET", `/deployments/${dep.id}`, { token: team.tokens.member }), (r) => r.body)
        yield* rollouts.refresh(dep.id)
        expect(yield* get).toMatchObject({ id: dep.id, status: "progressing" })
        yield* rollouts.refresh(dep.id)
        expect(yield* get).toMatchObject({ id: dep.id, status: "available", undeployed_at: null })
        // Settled: reading again changes nothing and tells nobody.
        yield* rollouts.refresh(dep.id)
        const events = (yield* log.after(account.id, Option.none(), 1000)).slice(before).filter((e) => e.type === "deployment.changed")
        expect(events.map((e) => [e.data["deployment_id"], e.data["status"]])).toEqual([
          [dep.id, "pending"],
          [dep.id, "progressing"],
          [dep.id, "available"]
        ])
        expect(events[2]!.data).toMatchObject({ agent: `${team.account}/helper`, build_id: "b-1", namespace: dep.namespace })
        const history = yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.member })
        expect(history.body.deployments[0]).toMatchObject({ id: dep.id, status: "available" })
      }))

    it.effect("a rollout the cluster fails (an image that cannot be pulled) shows failed with the cluster's reason, on GET and in the event", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"], ["b-2", "1.1.0"]])
        const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
        const log = yield* Ports.EventLog
        const { body: dep } = yield* deploy(team, "owner", "helper", { version: "1.0.0" })
        const message = `Back-off pulling image "ghcr.io/acme/helper:b-1"`
        yield* RolloutControl.failRollout(dep.namespace, "ImagePullBackOff", message)
        const before = (yield* log.after(account.id, Option.none(), 1000)).length
        yield* (yield* Rollouts.Rollouts).refresh(dep.id)
        const got = yield* raw("GET", `/deployments/${dep.id}`, { token: team.tokens.member })
        expect(got.body).toMatchObject({ status: "failed", status_reason: "ImagePullBackOff", status_message: message, undeployed_at: null })
        const events = (yield* log.after(account.id, Option.none(), 1000)).slice(before)
        expect(events.map((e) => [e.type, e.data["status"], e.data["status_reason"], e.data["status_message"]])).toEqual([
          ["deployment.changed", "failed", "ImagePullBackOff", message]
        ])
        // A deploy of another build rolls out anew; the failed record is superseded, without the reason.
        const { body: next } = yield* deploy(team, "owner", "helper", { version: "1.1.0" })
        expect(next).toMatchObject({ status: "pending" })
        const was = yield* raw("GET", `/deployments/${dep.id}`, { token: team.tokens.member })
        expect(was.body.status).toBe("superseded")
        expect(was.body.status_reason).toBeUndefined()
      }))

    it.effect("a round reads every live deployment that has not settled, batch by batch, and leaves ended and settled ones alone", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "alpha", [["b-1", "1.0.0"]])
        yield* agentWith(team, "beta", [["b-1", "1.0.0"]])
        yield* agentWith(team, "gamma", [["b-1", "1.0.0"]])
        const a = (yield* deploy(team, "owner", "alpha")).body
        const b = (yield* deploy(team, "owner", "beta")).body
        const c = (yield* deploy(team, "owner", "gamma")).body
        yield* raw("DELETE", `/deployments/${c.id}`, { token: team.tokens.owner })
        const rollouts = yield* Rollouts.Rollouts
        const store = yield* Ports.DeploymentStore
        const statusOf = (id: string) => Effect.map(store.findById(Deployment.DeploymentId.make(id)), (r) => Option.getOrThrow(r).status)
        // Rounds of one until the walk ends: every unsettled deployment (of every test so far) is read once per walk.
        const walk = Effect.gen(function*() {
          let after: Deployment.DeploymentId | undefined = undefined
          let rounds = 0
          do {
            after = yield* rollouts.round(after, 1)
            rounds++
          } while (after !== undefined && rounds < 1000)
          return rounds
        })
        expect(yield* walk).toBeGreaterThanOrEqual(2)
        expect([yield* statusOf(a.id), yield* statusOf(b.id), yield* statusOf(c.id)]).toEqual(["progressing", "progressing", "undeployed"])
        yield* walk
        expect([yield* statusOf(a.id), yield* statusOf(b.id)]).toEqual(["available", "available"])
        const unsettled = yield* store.listLiveWithStatus(Deployment.unsettledStatuses, undefined, 1000)
        expect(unsettled.map((d) => d.id)).not.toContain(a.id)
      }))

    it.effect("once an account deploys P/x, P's build events reach that account's stream too", () =>
      Effect.gen(function*() {
        const publisher = yield* Seed.team
        const deployer = yield* Seed.team
        yield* agentWith(publisher, "helper", [["b-1", "1.0.0"]])
        yield* deploy(deployer, "owner", "helper", { into: deployer.account }, publisher)
        const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(deployer.account))
        const log = yield* Ports.EventLog
        const before = (yield* log.after(account.id, Option.none(), 1000)).length
        yield* agentWith(publisher, "helper", [["b-2"]])
        const events = (yield* log.after(account.id, Option.none(), 1000)).slice(before)
        expect(events.map((e) => [e.type, e.data["agent"], e.data["build_id"]])).toEqual([
          ["agent.build", `${publisher.account}/helper`, "b-2"]
        ])
      }))

    it.effect("publishing, deploying and undeploying are written to the account's audit log with who did them", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* agentWith(team, "helper", [["b-1", "1.0.0"]])
        const deployed = yield* deploy(team, "admin", "helper")
        expect(deployed.status).toBe(201)
        expect((yield* raw("DELETE", `/deployments/${deployed.body.id}`, { token: team.tokens.owner })).status).toBe(200)
        const log = yield* raw("GET", `/accounts/${team.account}/audit?limit=3`, { token: team.tokens.admin })
        expect(log.body.entries.map((e: { action: string; actor: string; target: string }) => [e.action, e.actor, e.target])).toEqual([
          ["deployment.undeployed", team.principals.owner.user.id, deployed.body.id],
          ["deployment.created", team.principals.admin.user.id, deployed.body.id],
          ["agent.published", team.principals.owner.user.id, `${team.account}/helper@1.0.0`]
        ])
        expect(log.body.entries[1].details).toContain("1.0.0")
      }))
  })
})
