/**
 * A deploy the cluster refuses leaves nothing behind.
 * (One it.layer per file: layers of several it.layer blocks in one file are not kept apart.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Catalog, Cluster, Deployments, Ids } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { Effect, Layer } from "effect"

const unavailable = Layer.succeed(Cluster.Cluster, new Proxy({} as Cluster.Cluster["Type"], {
  get: () => () => Effect.fail(new Cluster.ClusterError({ reason: "Unavailable", message: "The cluster cannot be reached." }))
}))

describe("Deployments with an unreachable cluster", () => {
  it.layer(TestServices.make({ clusterLayer: unavailable }))((it) => {
    it.effect("a deploy the cluster refuses writes nothing: no record, no event", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const catalog = yield* Catalog.Catalog
        const name = Ids.AgentName.make("helper")
        yield* catalog.register(team.principals.owner, {
          account: team.account,
          name,
          build_id: Ids.BuildId.make("b-1"),
          registry: "ghcr.io/acme",
          spec_content: "name: helper\n"
        })
        const deployments = yield* Deployments.Deployments
        const error = yield* Effect.flip(deployments.deploy(team.principals.owner, {
          account: team.account,
          name,
          build_id: Ids.BuildId.make("b-1")
        }))
        expect(error._tag).toBe("ClusterError")
        expect(yield* deployments.history(team.principals.owner, team.account, name)).toEqual([])
      }))
  })
})
