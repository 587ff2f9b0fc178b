/**
 * The rollouts' poll as a server runs it: a scoped fiber that reads the
 * rollouts of live deployments every interval, and stops with its scope.
 */
import { describe, expect, it } from "@effect/vitest"
import { Catalog, Deployments, Ids, Ports, Rollouts } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { Duration, Effect, Layer, Option, TestClock } from "effect"

describe("Rollouts.poller", () => {
  it.effect("reads every interval: a deploy is progressing after one interval and available after two, with events; none after its scope ends", () =>
    Effect.gen(function*() {
      const team = yield* Seed.team
      const name = Ids.AgentName.make("helper")
      yield* (yield* Catalog.Catalog).register(team.principals.owner, {
        account: team.account,
        name,
        build_id: Ids.BuildId.make("b-1"),
        registry: "ghcr.io/acme",
        spec_content: "name: helper\n"
      })
      const dep = yield* (yield* Deployments.Deployments).deploy(team.principals.owner, { account: team.account, name, build_id: Ids.BuildId.make("b-1") })
      const store = yield* Ports.DeploymentStore
      const status = Effect.map(store.findById(dep.id), (r) => Option.getOrThrow(r).status)
      expect(yield* status).toBe("pending")
      const config = Layer.succeed(Rollouts.RolloutsConfig, { interval: Duration.seconds(2), batch: 10 })
      yield* Effect.scoped(Effect.gen(function*() {
        // The first round runs at start.
        yield* Layer.build(Rollouts.poller.pipe(Layer.provide(config)))
        yield* TestClock.adjust(Duration.millis(1))
        expect(yield* status).toBe("progressing")
        yield* TestClock.adjust(Duration.seconds(2))
        expect(yield* status).toBe("available")
      }))
      const account = Option.getOrThrow(yield* (yield* Ports.AccountStore).findByName(team.account))
      const events = yield* (yield* Ports.EventLog).after(account.id, Option.none(), 100)
      expect(events.filter((e) => e.type === "deployment.changed").map((e) => e.data["status"])).toEqual(["pending", "progressing", "available"])
    }).pipe(Effect.provide(TestServices.make())))
})
