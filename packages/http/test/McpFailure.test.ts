/**
 * A failure behind an MCP server (issue 29) is the protocol's internal error
 * (-32603) that never shows the cause: the storage's as the API words it,
 * a bug's as a bare sentence (and logged). The server answers again once
 * the storage is back.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Errors, Ports } from "@hosting/core"
import { ErrorMapping } from "@hosting/http"
import { MemoryStorage, Seed } from "@hosting/testing"
import { Context, Effect, Layer } from "effect"
import { layer, port } from "./HttpTestServer.js"

const leaky = new Error("SELECT secret_column FROM deployments -- /var/lib/hosting/db.sqlite")

/** What listing deployments does: pass through, fail as storage does when it is down, or die as a bug does. */
let mode: "up" | "down" | "bug" = "up"

/** The memory storage with its deployment listing behind the switch. */
const flaky = Layer.effectContext(Effect.gen(function*() {
  const context = yield* Effect.context<Ports.StoragePorts>()
  const deployments = Context.get(context, Ports.DeploymentStore)
  return Context.add(context, Ports.DeploymentStore, {
    ...deployments,
    liveOfAccounts: (...args) =>
      mode === "down"
        ? Effect.fail(new Errors.StorageError({ operation: "liveOfAccounts", cause: leaky }))
        : mode === "bug"
        ? Effect.die(leaky)
        : deployments.liveOfAccounts(...args)
  })
})).pipe(Layer.provide(MemoryStorage.layer))

const failureOf = (promise: Promise<unknown>) =>
  Effect.promise(() => promise.then(() => ({ code: 0, message: "resolved" }), (e: any) => ({ code: e?.code as number, message: String(e?.message) })))

describe("HTTP: a failure behind an MCP server (issue 29)", () => {
  withLayer(layer({ storageLayer: flaky }), { excludeTestServices: true })((it) => {
    it.scoped("storage down is -32603 worded as the API words it, a bug -32603 with a bare sentence; neither shows the cause; then it answers again", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = `http://127.0.0.1:${yield* port}/api/v1`
        const client = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new Client({ name: "hosting-test", version: "1.0.0" })
            await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
              requestInit: { headers: { authorization: `Bearer ${team.tokens.member}` } }
            }))
            return client
          }),
          (client) => Effect.promise(() => client.close())
        )
        try {
          mode = "down"
          const down = yield* failureOf(client.listResources())
          expect(down.code).toBe(-32603)
          expect(down.message).toContain(ErrorMapping.storageDetails)
          mode = "bug"
          const bug = yield* failureOf(client.listResources())
          expect(bug.code).toBe(-32603)
          expect(bug.message).toContain(ErrorMapping.internalDetails)
          for (const failure of [down, bug]) {
            for (const secret of ["secret", "SELECT", "/var/lib", "sqlite", "StorageError", "liveOfAccounts"]) {
              expect(failure.message).not.toContain(secret)
            }
          }
        } finally {
          mode = "up"
        }
        expect((yield* Effect.promise(() => client.listResources())).resources).toEqual([])
      }))
  })
})
