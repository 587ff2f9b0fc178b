/**
 * Deleting an account on a storage adapter (issue 26): an account with an
 * agent, deployments of it by the account and by another one, a
 * conversation with its reply, files (ready and pending) and traces; once
 * nothing runs, DELETE /accounts/{account} removes all of it, the files'
 * objects too, and leaves the other account's own things.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Deployment, Files, ObjectStore, type Ports } from "@hosting/core"
import { Effect, type Layer, Option } from "effect"
import { bearer, call, conversationOf, deployed, fileOf, layer, otlpExport, send, world } from "./RouteHarness.js"

export const run = (name: string, storage: Layer.Layer<Ports.StoragePorts>) =>
  describe(`HTTP on ${name} storage: deleting an account`, () => {
    withLayer(layer({ echo: { delay: 0 }, storageLayer: storage }), { excludeTestServices: true })((it) => {
      it.effect("everything of the account goes, its files' objects included; the other account keeps its own", () =>
        Effect.gen(function*() {
          const w = yield* world
          const owner = w.team.tokens.owner
          const { deployment } = yield* deployed(w)
          const conversation = yield* conversationOf(owner, deployment)
          const ready = yield* fileOf(owner, deployment, "ready")
          const uploaded = yield* fileOf(owner, deployment, "uploaded")
          yield* call(owner, "POST", "/otlp/v1/traces", otlpExport(w.team.account, "helper"), 200)
          // The outsider's account deploys the agent too, and keeps an agent of its own.
          const outsider = w.team.tokens.outsider
          const elsewhere = ((yield* call(outsider, "GET", "/me", undefined, 200)).json as { accounts: Array<{ name: string }> }).accounts[0]!.name
          const theirs = (yield* call(outsider, "POST", `/agents/${w.team.account}/helper/deployments`, { into: elsewhere }, 201)).json as {
            id: string
          }
          const objects = yield* ObjectStore.ObjectStore
          const ref = (key: string) => ({
            deployment_id: Deployment.DeploymentId.make(deployment),
            owner_id: w.team.principals.owner.user.id,
            key
          })
          const stored = [Files.objectKey(ref(ready)), Files.uploadKey(ref(uploaded))]
          for (const key of stored) expect(Option.isSome(yield* objects.head(key)), key).toBe(true)

          const busy = yield* send({ method: "DELETE", path: `/api/v1/accounts/${w.team.account}`, headers: bearer(owner) })
          expect(busy.status).toBe(409)
          yield* call(owner, "DELETE", `/deployments/${deployment}`, undefined, 200)
          yield* call(outsider, "DELETE", `/deployments/${theirs.id}`, undefined, 200)
          yield* call(owner, "DELETE", `/accounts/${w.team.account}`, undefined, 200)

          const gone = (path: string, token: string) => Effect.map(send({ method: "GET", path: `/api/v1${path}`, headers: bearer(token) }), (a) => a.status)
          expect(yield* gone(`/accounts/${w.team.account}`, owner)).toBe(404)
          expect(yield* gone(`/agents/${w.team.account}/helper`, owner)).toBe(404)
          expect(yield* gone(`/deployments/${deployment}`, owner)).toBe(404)
          expect(yield* gone(`/deployments/${theirs.id}`, outsider)).toBe(404)
          expect(yield* gone(`/deployments/${deployment}/messaging/conversations/${conversation}/messages`, owner)).toBe(404)
          expect(yield* gone(`/deployments/${deployment}/files/${encodeURIComponent(ready)}/content`, owner)).toBe(404)
          for (const key of stored) expect(Option.isNone(yield* objects.head(key)), key).toBe(true)
          expect(yield* gone(`/accounts/${elsewhere}`, outsider)).toBe(200)
        }), 60_000)
    })
  })
