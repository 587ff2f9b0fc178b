/**
 * The SDK's TaskStore over the A2aTaskStore port: the tasks of one
 * deployment, per caller, stored as the protocol's JSON, so that GetTask,
 * CancelTask and ListTasks find a task after a restart and on any process.
 */
import type { TaskState } from "@a2a-js/sdk"
import type { ServerCallContext, TaskStore } from "@a2a-js/sdk/server"
import { type Deployment, Ids, Ports } from "@hosting/core"
import { DateTime, type Effect, Option } from "effect"
import type { Sdk } from "./internal/a2aSdk.js"

/** Most tasks one ListTasks answers. */
const maxPageSize = 100


/** Whether a stored task is still running (submitted or working): a cancel of it has a reply to stop. */
export const isRunning = ({ Task, TaskState }: Sdk, record: Ports.A2aTaskRecord): boolean => {
  const live: ReadonlyArray<TaskState> = [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]
  try {
    return live.includes(Task.fromJSON(JSON.parse(record.task)).status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)
  } catch {
    return false
  }
}

/**
 * The store of a deployment's tasks; `ownerOf` names the caller of a call
 * (the user the route authenticated). A call without one reads nothing.
 */
export const taskStoreFor = (
  { Task, TaskState }: Sdk,
  store: Ports.A2aTaskStore["Type"],
  deploymentId: Deployment.DeploymentId,
  ownerOf: (context: ServerCallContext) => string | undefined,
  run: <A>(effect: Effect.Effect<A, unknown>) => Promise<A>
): TaskStore => ({
  save: async (task, context) => {
    const owner = ownerOf(context)
    if (owner === undefined) throw new Error("a task is saved for an authenticated caller only")
    await run(store.save({
      deployment_id: deploymentId,
      owner_id: Ids.UserId.make(owner),
      task_id: task.id,
      context_id: task.contextId,
      task: JSON.stringify(Task.toJSON(task)),
      updated_at: DateTime.unsafeNow()
    }))
  },
  load: async (taskId, context) => {
    const owner = ownerOf(context)
    if (owner === undefined) return undefined
    const found = await run(store.find(deploymentId, Ids.UserId.make(owner), taskId))
    return Option.match(found, { onNone: () => undefined, onSome: (record) => Task.fromJSON(JSON.parse(record.task)) })
  },
  list: async (params, context) => {
    const owner = ownerOf(context)
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), maxPageSize)
    if (owner === undefined) return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 }
    // The page token is where the page starts among the owner's tasks, as the page before it gave it.
    const offset = /^[0-9]{1,9}$/.test(params.pageToken) ? Number(params.pageToken) : 0
    const records = await run(store.listFor(deploymentId, Ids.UserId.make(owner), {
      contextId: params.contextId === "" ? undefined : params.contextId,
      limit: pageSize,
      offset
    }))
    const tasks = records.map((record) => Task.fromJSON(JSON.parse(record.task)))
      .filter((task) => params.status === TaskState.TASK_STATE_UNSPECIFIED || task.status?.state === params.status)
    // A full page may have a page after it; a short one is the last.
    const nextPageToken = records.length === pageSize ? String(offset + pageSize) : ""
    return { tasks, nextPageToken, pageSize, totalSize: tasks.length }
  }
})
