import { Context, type DateTime, type Effect, type Option } from "effect"
import type { DeploymentId } from "../model/Deployment.js"
import type { StorageError } from "../model/Errors.js"
import type { UserId } from "../model/Ids.js"

/**
 * One A2A task of a deployment's agent (a turn asked over A2A), as the
 * protocol's JSON: kept per deployment and per caller, who alone reads it.
 */
export interface A2aTaskRecord {
  readonly deployment_id: DeploymentId
  readonly owner_id: UserId
  readonly task_id: string
  readonly context_id: string
  /** The task in the protocol's JSON form, as text. */
  readonly task: string
  readonly updated_at: DateTime.Utc
}

/**
 * The A2A tasks of the deployments, stored so that GetTask, CancelTask and
 * ListTasks find a task after a restart and on every process. Optional: a
 * server without it keeps tasks in the memory of the process that ran them.
 */
export class A2aTaskStore extends Context.Tag("@hosting/core/A2aTaskStore")<A2aTaskStore, {
  /** Creates or replaces the task with the same deployment, owner and id. */
  readonly save: (task: A2aTaskRecord) => Effect.Effect<void, StorageError>
  /** The owner's task of the deployment with that id, if any. */
  readonly find: (deploymentId: DeploymentId, ownerId: UserId, taskId: string) => Effect.Effect<Option.Option<A2aTaskRecord>, StorageError>
  /** The owner's tasks of the deployment, of one context when given, most recently updated first, at most `limit` after skipping `offset`. */
  readonly listFor: (
    deploymentId: DeploymentId,
    ownerId: UserId,
    options: { readonly contextId?: string | undefined; readonly limit: number; readonly offset?: number | undefined }
  ) => Effect.Effect<ReadonlyArray<A2aTaskRecord>, StorageError>
}>() {}
