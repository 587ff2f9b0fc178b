import { Context, type DateTime, Effect, type Option } from "effect"
import type { DeploymentId } from "../model/Deployment.js"
import type { FileRecord } from "../model/File.js"
import type { StorageError } from "../model/Errors.js"
import type { UserId } from "../model/Ids.js"

/** File records (metadata; the bytes are in the object store). */
export class FileStore extends Context.Tag("@hosting/core/FileStore")<FileStore, {
  /** Creates or replaces the record with the same key. */
  readonly upsert: (file: FileRecord) => Effect.Effect<void, StorageError>
  /** A file of the deployment with that key, if any (whatever its owner or status). */
  readonly find: (deploymentId: DeploymentId, key: string) => Effect.Effect<Option.Option<FileRecord>, StorageError>
  /** A user's files on a deployment, newest first. */
  readonly listFor: (deploymentId: DeploymentId, ownerId: UserId) => Effect.Effect<ReadonlyArray<FileRecord>, StorageError>
  /** Pending files of every deployment reserved before the time, oldest first, at most `limit`. */
  readonly pendingBefore: (time: DateTime.Utc, limit: number) => Effect.Effect<ReadonlyArray<FileRecord>, StorageError>
  /** Removes the record if it is still pending; `false` when it is ready or gone. */
  readonly removePending: (deploymentId: DeploymentId, key: string) => Effect.Effect<boolean, StorageError>
}>() {}
