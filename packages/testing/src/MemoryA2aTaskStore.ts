/**
 * The A2aTaskStore in memory: a fake for tests (it passes A2aTaskStoreSuite);
 * a server without a durable store keeps its tasks in the SDK's own memory.
 */
import { Ports } from "@hosting/core"
import { DateTime, Effect, Layer, Option } from "effect"

const keyOf = (deploymentId: string, ownerId: string, taskId: string) => JSON.stringify([deploymentId, ownerId, taskId])

export const make = (): Ports.A2aTaskStore["Type"] => {
  const tasks = new Map<string, Ports.A2aTaskRecord>()
  return Ports.A2aTaskStore.of({
    save: (task) => Effect.sync(() => void tasks.set(keyOf(task.deployment_id, task.owner_id, task.task_id), task)),
    find: (deploymentId, ownerId, taskId) => Effect.sync(() => Option.fromNullable(tasks.get(keyOf(deploymentId, ownerId, taskId)))),
    listFor: (deploymentId, ownerId, options) =>
      Effect.sync(() =>
        [...tasks.values()]
          .filter((t) =>
            t.deployment_id === deploymentId && t.owner_id === ownerId && (options.contextId === undefined || t.context_id === options.contextId)
          )
          .sort((a, b) => DateTime.toEpochMillis(b.updated_at) - DateTime.toEpochMillis(a.updated_at) || a.task_id.localeCompare(b.task_id))
          .slice(options.offset ?? 0, (options.offset ?? 0) + options.limit)
      )
  })
}

/** A fresh in-memory store for each build of the layer. */
export const layer: Layer.Layer<Ports.A2aTaskStore> = Layer.sync(Ports.A2aTaskStore, make)
