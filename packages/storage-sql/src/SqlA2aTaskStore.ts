/**
 * A2aTaskStore on @effect/sql: one row per task of a deployment and caller,
 * the task as the protocol's JSON text. Its table is made by the migration
 * `0018_a2a_tasks` (registered in Migrations.ts, written here beside it).
 */
import { SqlClient } from "@effect/sql"
import { Deployment, Ids, Ports } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText } from "./internal/sql.js"

/** The table of the tasks, keyed so that a caller's tasks of a deployment are one range. */
export const migration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE a2a_tasks (
    deployment_id TEXT NOT NULL,
    owner_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    task TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (deployment_id, owner_id, task_id)
  )`
  yield* sql`CREATE INDEX a2a_tasks_recent ON a2a_tasks (deployment_id, owner_id, updated_at)`
})

interface TaskRow {
  readonly deployment_id: string
  readonly owner_id: string
  readonly task_id: string
  readonly context_id: string
  readonly task: string
  readonly updated_at: string
}

const toRecord = (row: TaskRow): Ports.A2aTaskRecord => ({
  deployment_id: Deployment.DeploymentId.make(row.deployment_id),
  owner_id: Ids.UserId.make(row.owner_id),
  task_id: row.task_id,
  context_id: row.context_id,
  task: row.task,
  updated_at: timeOf(row.updated_at)
})

export const make: Effect.Effect<Ports.A2aTaskStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const save = (t: Ports.A2aTaskRecord) =>
    sql`INSERT INTO a2a_tasks (deployment_id, owner_id, task_id, context_id, task, updated_at)
      VALUES (${t.deployment_id}, ${t.owner_id}, ${t.task_id}, ${t.context_id}, ${t.task}, ${timeText(t.updated_at)})
      ON CONFLICT (deployment_id, owner_id, task_id) DO UPDATE SET context_id = excluded.context_id, task = excluded.task,
        updated_at = excluded.updated_at`.pipe(Effect.asVoid, storageError("SqlA2aTaskStore.save"))

  const find = (deploymentId: Deployment.DeploymentId, ownerId: Ids.UserId, taskId: string) =>
    sql<TaskRow>`SELECT deployment_id, owner_id, task_id, context_id, task, updated_at FROM a2a_tasks
      WHERE deployment_id = ${deploymentId} AND owner_id = ${ownerId} AND task_id = ${taskId}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toRecord)),
      storageError("SqlA2aTaskStore.find")
    )

  const listFor = (
    deploymentId: Deployment.DeploymentId,
    ownerId: Ids.UserId,
    options: { readonly contextId?: string | undefined; readonly limit: number; readonly offset?: number | undefined }
  ) =>
    sql<TaskRow>`SELECT deployment_id, owner_id, task_id, context_id, task, updated_at FROM a2a_tasks
      WHERE deployment_id = ${deploymentId} AND owner_id = ${ownerId}
      ${options.contextId === undefined ? sql.literal("") : sql`AND context_id = ${options.contextId}`}
      ORDER BY updated_at DESC, task_id LIMIT ${options.limit} OFFSET ${options.offset ?? 0}`.pipe(
      Effect.map((rows) => rows.map(toRecord)),
      storageError("SqlA2aTaskStore.listFor")
    )

  return Ports.A2aTaskStore.of({ save, find, listFor })
})

export const layer = Layer.effect(Ports.A2aTaskStore, make)
