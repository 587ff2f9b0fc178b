/**
 * The contract of the A2aTaskStore port; every storage that keeps A2A tasks
 * runs it with one line.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Deployment, Ids, Ports } from "@hosting/core"
import { DateTime, Effect, type Layer, Option } from "effect"
import { uniqueName } from "./StorageSuite.js"

const at = (seconds: number) => DateTime.unsafeMake(Date.UTC(2026, 10, 1, 10, 0, seconds))

const record = (deployment: string, owner: string, task: string, context: string, seconds: number, state = "working") => ({
  deployment_id: Deployment.DeploymentId.make(deployment),
  owner_id: Ids.UserId.make(owner),
  task_id: task,
  context_id: context,
  task: JSON.stringify({ id: task, contextId: context, status: { state } }),
  updated_at: at(seconds)
})

const ids = (records: ReadonlyArray<Ports.A2aTaskRecord>) => records.map((r) => r.task_id)

/** Runs the A2aTaskStore contract against a layer providing the port. */
export const run = <E>(name: string, layer: Layer.Layer<Ports.A2aTaskStore, E>) => {
  describe(`A2A task store contract: ${name}`, () => {
    withLayer(layer, { timeout: 30_000 })((it) => {
      it.effect("a saved task is found again, as it was saved; saving it again replaces it", () =>
        Effect.gen(function*() {
          const store = yield* Ports.A2aTaskStore
          const [dep, owner, task] = [uniqueName("dep"), uniqueName("user"), uniqueName("task")]
          const first = record(dep, owner, task, "ctx-1", 1)
          yield* store.save(first)
          const found = Option.getOrThrow(yield* store.find(first.deployment_id, first.owner_id, task))
          expect({ ...found, updated_at: DateTime.formatIso(found.updated_at) }).toEqual({ ...first, updated_at: DateTime.formatIso(first.updated_at) })
          const done = record(dep, owner, task, "ctx-1", 2, "completed")
          yield* store.save(done)
          expect(Option.getOrThrow(yield* store.find(done.deployment_id, done.owner_id, task)).task).toBe(done.task)
          expect(ids(yield* store.listFor(done.deployment_id, done.owner_id, { limit: 10 }))).toEqual([task])
        }))

      it.effect("a task is its owner's on its deployment: another user or deployment does not find or list it", () =>
        Effect.gen(function*() {
          const store = yield* Ports.A2aTaskStore
          const [dep, owner, task] = [uniqueName("dep"), uniqueName("user"), uniqueName("task")]
          const saved = record(dep, owner, task, "ctx", 1)
          yield* store.save(saved)
          const other = Ids.UserId.make(uniqueName("user"))
          const elsewhere = Deployment.DeploymentId.make(uniqueName("dep"))
          expect(Option.isNone(yield* store.find(saved.deployment_id, other, task))).toBe(true)
          expect(Option.isNone(yield* store.find(elsewhere, saved.owner_id, task))).toBe(true)
          expect(yield* store.listFor(saved.deployment_id, other, { limit: 10 })).toEqual([])
          expect(yield* store.listFor(elsewhere, saved.owner_id, { limit: 10 })).toEqual([])
        }))

      it.effect("the list: most recently updated first, of one context when asked, at most the limit, after the offset", () =>
        Effect.gen(function*() {
          const store = yield* Ports.A2aTaskStore
          const [dep, owner] = [uniqueName("dep"), uniqueName("user")]
          const tasks = [record(dep, owner, "t-a", "ctx-1", 1), record(dep, owner, "t-b", "ctx-2", 3), record(dep, owner, "t-c", "ctx-1", 2)]
          yield* Effect.forEach(tasks, store.save, { discard: true })
          const deployment = Deployment.DeploymentId.make(dep)
          const user = Ids.UserId.make(owner)
          expect(ids(yield* store.listFor(deployment, user, { limit: 10 }))).toEqual(["t-b", "t-c", "t-a"])
          expect(ids(yield* store.listFor(deployment, user, { contextId: "ctx-1", limit: 10 }))).toEqual(["t-c", "t-a"])
          expect(ids(yield* store.listFor(deployment, user, { limit: 2 }))).toEqual(["t-b", "t-c"])
          expect(ids(yield* store.listFor(deployment, user, { limit: 2, offset: 2 }))).toEqual(["t-a"])
          expect(ids(yield* store.listFor(deployment, user, { contextId: "ctx-1", limit: 1, offset: 1 }))).toEqual(["t-a"])
        }))
    })
  })
}
