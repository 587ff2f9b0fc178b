/**
 * FileStore on @effect/sql.
 */
import { SqlClient } from "@effect/sql"
import { Conversation, Deployment, File, Ids, Ports, Trusted } from "@hosting/core"
import { type DateTime, Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText } from "./internal/sql.js"

interface FileRow {
  readonly deployment_id: string
  readonly key: string
  readonly owner_id: string
  readonly filename: string
  readonly content_type: string
  readonly size: number | string
  readonly status: "pending" | "ready"
  readonly origin: "user" | "agent"
  readonly conversation_id: string | null
  readonly created_at: string
}

const toFile = (row: FileRow) =>
  Trusted.make(File.FileRecord, {
    key: row.key,
    deployment_id: Deployment.DeploymentId.make(row.deployment_id),
    owner_id: Ids.UserId.make(row.owner_id),
    filename: row.filename,
    content_type: row.content_type,
    size: Number(row.size),
    status: row.status,
    origin: row.origin,
    conversation_id: Option.map(Option.fromNullable(row.conversation_id), Conversation.ConversationId.make),
    created_at: timeOf(row.created_at)
  })

export const make: Effect.Effect<Ports.FileStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const upsert = (f: File.FileRecord) =>
    sql`INSERT INTO files (deployment_id, key, owner_id, filename, content_type, size, status, origin, conversation_id, created_at)
      VALUES (${f.deployment_id}, ${f.key}, ${f.owner_id}, ${f.filename}, ${f.content_type}, ${f.size}, ${f.status}, ${f.origin},
        ${Option.getOrNull(f.conversation_id)}, ${timeText(f.created_at)})
      ON CONFLICT (deployment_id, key) DO UPDATE SET owner_id = excluded.owner_id, filename = excluded.filename,
        content_type = excluded.content_type, size = excluded.size, status = excluded.status, origin = excluded.origin,
        conversation_id = excluded.conversation_id`.pipe(Effect.asVoid, storageError("SqlFileStore.upsert"))

  const find = (deploymentId: Deployment.DeploymentId, key: string) =>
    sql<FileRow>`SELECT deployment_id, key, owner_id, filename, content_type, size, status, origin, conversation_id, created_at
      FROM files WHERE deployment_id = ${deploymentId} AND key = ${key}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toFile)),
      storageError("SqlFileStore.find")
    )

  const listFor = (deploymentId: Deployment.DeploymentId, ownerId: Ids.UserId) =>
    sql<FileRow>`SELECT deployment_id, key, owner_id, filename, content_type, size, status, origin, conversation_id, created_at
      FROM files WHERE deployment_id = ${deploymentId} AND owner_id = ${ownerId} ORDER BY created_at DESC, key`.pipe(
      Effect.map((rows) => rows.map(toFile)),
      storageError("SqlFileStore.listFor")
    )

  const pendingBefore = (time: DateTime.Utc, limit: number) =>
    sql<FileRow>`SELECT deployment_id, key, owner_id, filename, content_type, size, status, origin, conversation_id, created_at
      FROM files WHERE status = 'pending' AND created_at < ${timeText(time)}
      ORDER BY created_at, deployment_id, key LIMIT ${limit}`.pipe(
      Effect.map((rows) => rows.map(toFile)),
      storageError("SqlFileStore.pendingBefore")
    )

  const removePending = (deploymentId: Deployment.DeploymentId, key: string) =>
    sql<{ key: string }>`DELETE FROM files WHERE deployment_id = ${deploymentId} AND key = ${key} AND status = 'pending'
      RETURNING key`.pipe(
      Effect.map((rows) => rows.length > 0),
      storageError("SqlFileStore.removePending")
    )

  return Ports.FileStore.of({ upsert, find, listFor, pendingBefore, removePending })
})

export const layer = Layer.effect(Ports.FileStore, make)
