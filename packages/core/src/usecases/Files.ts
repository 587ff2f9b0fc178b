/**
 * Files of a deployment: reserve, upload (through the API or a presigned
 * URL), complete, list and download; agent-produced files addressed by name.
 * A missing, incomplete or someone else's file is not found, always.
 * Reservations never completed are removed by a sweep (`expirySweep`).
 */
import { Cause, Context, DateTime, Duration, Effect, Layer, Option, Schedule, Stream } from "effect"
import type { ConversationId } from "../model/Conversation.js"
import type { DeploymentId } from "../model/Deployment.js"
import { FileRecord } from "../model/File.js"
import {
  DeploymentNotFound,
  FileComplete,
  FileNotFound,
  FilesUnavailable,
  FileTooLarge,
  InvalidRequest,
  UploadExpired,
  UploadIncomplete
} from "../model/Errors.js"
import type { UserId } from "../model/Ids.js"
import { orFail } from "../internal/lookup.js"
import { ObjectStore, type ObjectStoreError } from "../ports/ObjectStore.js"
import { DeploymentStore, FileStore, IdGenerator } from "../ports/Ports.js"
import * as Policy from "../model/Policy.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"

/** Settings of files. */
export class FilesConfig extends Context.Reference<FilesConfig>()("@hosting/core/FilesConfig", {
  defaultValue: () => ({
    /** Largest file a user may reserve. */
    maxFileBytes: 512 * 1024 * 1024,
    /** How long a reservation's upload URL, and a download redirect, stay valid. */
    uploadExpiry: Duration.minutes(15) as Duration.Duration,
    downloadExpiry: Duration.minutes(5) as Duration.Duration,
    /**
     * How long after its upload expiry a pending reservation may still be
     * completed (an upload that started in time may still be running); past
     * it the reservation is gone and the sweep removes it with its object.
     */
    uploadGrace: Duration.minutes(15) as Duration.Duration,
    /** How often `expirySweep` looks for reservations past their grace. */
    sweepInterval: Duration.minutes(5) as Duration.Duration
  })
}) {}

/** What a reservation asks for. */
export interface ReserveInput {
  readonly filename: string
  readonly content_type: string
  readonly size: number
}

/** Keys of user files: `f-` and a UUID. Anything else in a download path is an agent file's name. */
export const userKey = /^f-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * A filename as a user or an agent may give it: 1-255 characters, no path
 * (no `/` or `\`), not `.` or `..`, no NUL or control characters.
 */
export const checkFilename = (name: string): Option.Option<string> => {
  if (name.length === 0 || name.length > 255) return Option.some("must be 1 to 255 characters")
  if (name === "." || name === ".." || /[/\\]/.test(name)) return Option.some("must be a plain file name, not a path")
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return Option.some("must not contain NUL or control characters")
  return Option.none()
}

/** How much of an oversize upload is read (and dropped) before the connection is cut. */
const overflowMargin = 1024 * 1024

const contentTypePattern = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(?:\s*;\s*[a-z0-9-]+=[A-Za-z0-9._-]+)?$/i

/** Where a file's bytes live in the object store: built from ids only. */
export const objectKey = (file: { readonly deployment_id: DeploymentId; readonly owner_id: UserId; readonly key: string }) =>
  `files/${file.deployment_id}/${file.owner_id}/${file.key}`

/**
 * Where the bytes of a reservation are uploaded (the presigned URL, the
 * upload route), until completing copies them to `objectKey`: no URL and no
 * upload ever writes a ready file's object, so its bytes never change.
 */
export const uploadKey = (file: { readonly deployment_id: DeploymentId; readonly owner_id: UserId; readonly key: string }) =>
  `uploads/${file.deployment_id}/${file.owner_id}/${file.key}`

/** The record key of an agent-produced file of a user: per user, by name. */
export const agentFileKey = (owner: UserId, filename: string) => `agent/${owner}/${filename}`

/** Most reservations the sweep reads in one query. */
const sweepBatch = 100

const unavailable = (error: ObjectStoreError) =>
  error.reason === "Unavailable"
    ? new FilesUnavailable({ details: "The file store is not reachable; try again shortly." })
    : new FilesUnavailable({ details: "The file store failed; try again shortly." })

export class Files extends Effect.Service<Files>()("@hosting/core/Files", {
  effect: Effect.gen(function*() {
    const files = yield* FileStore
    const deployments = yield* DeploymentStore
    const objects = yield* ObjectStore
    const ids = yield* IdGenerator
    const config = yield* FilesConfig

    const deploymentFor = Effect.fnUntraced(function*(principal: Principal, id: DeploymentId) {
      const deployment = yield* deployments.findById(id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
      const refused = Policy.filesRefusal(principal, deployment)
      if (Option.isSome(refused)) return yield* refused.value
      return deployment
    })

    /** When a reservation's upload URL expires: no bytes are taken from then on. */
    const expiresAt = (file: FileRecord) => DateTime.addDuration(file.created_at, config.uploadExpiry)

    /** Reservations made before this time are past their grace: they can't be completed and the sweep removes them. */
    const lapsedBefore = (now: DateTime.Utc) =>
      DateTime.subtractDuration(now, Duration.sum(config.uploadExpiry, config.uploadGrace))

    const isLapsed = (file: FileRecord, now: DateTime.Utc) =>
      file.status === "pending" && DateTime.lessThan(file.created_at, lapsedBefore(now))

    /**
     * Upload objects of completed files to delete again once their presigned URL has expired (a minute
     * later, for the store's clock): a PUT with the URL after the completion writes the upload object
     * again, which nothing reads. Kept in the process: at most the completions of one upload expiry.
     */
    const lateUploads: Array<{ readonly key: string; readonly after: DateTime.Utc }> = []

    /** Deletes the upload object of a file just completed (a failure is only logged: the file is ready). */
    const dropUpload = Effect.fnUntraced(function*(file: FileRecord) {
      yield* objects.delete(uploadKey(file)).pipe(
        Effect.catchAll((error) => Effect.logWarning("files: could not delete the upload of a completed file", error))
      )
      const expires = expiresAt(file)
      if (DateTime.lessThan(yield* DateTime.now, expires)) {
        lateUploads.push({ key: uploadKey(file), after: DateTime.addDuration(expires, Duration.minutes(1)) })
      }
    })

    /** Deletes the upload objects whose URL has expired since their file was completed; a failed one waits for the next sweep. */
    const sweepLateUploads = Effect.gen(function*() {
      const now = yield* DateTime.now
      for (const due of lateUploads.filter((upload) => DateTime.lessThan(upload.after, now))) {
        yield* objects.delete(due.key).pipe(Effect.mapError(unavailable))
        lateUploads.splice(lateUploads.indexOf(due), 1)
      }
    })

    /** The caller's file with that key; pending ones only when asked for. */
    const ownFile = (principal: Principal, deploymentId: DeploymentId, key: string, pending: boolean) =>
      files.find(deploymentId, key).pipe(
        Effect.map(Option.filter((f) => Policy.owns(principal, f.owner_id) && (pending || f.status === "ready"))),
        orFail(() => new FileNotFound({ key }))
      )

    /** Reserves a file: a pending record and where to upload its bytes. */
    const reserve = Tracing.fn("Files.reserve")(function*(principal: Principal, deploymentId: DeploymentId, input: ReserveInput) {
      yield* deploymentFor(principal, deploymentId)
      const bad = checkFilename(input.filename)
      if (Option.isSome(bad)) return yield* new InvalidRequest({ details: `filename: ${bad.value}` })
      if (!contentTypePattern.test(input.content_type)) {
        return yield* new InvalidRequest({ details: "content_type: must be a media type such as text/plain" })
      }
      if (!Number.isSafeInteger(input.size) || input.size < 0 || input.size > config.maxFileBytes) {
        return yield* new InvalidRequest({ details: `size: must be a whole number of bytes from 0 to ${config.maxFileBytes}` })
      }
      const now = yield* DateTime.now
      const record = new FileRecord({
        key: `f-${yield* ids.next}`,
        deployment_id: deploymentId,
        owner_id: principal.user.id,
        filename: input.filename,
        content_type: input.content_type,
        size: input.size,
        status: "pending",
        origin: "user",
        conversation_id: Option.none(),
        created_at: now
      })
      yield* files.upsert(record)
      const presigned = yield* objects.presignPut(uploadKey(record), {
        expiresIn: config.uploadExpiry,
        contentType: record.content_type,
        size: record.size
      }).pipe(Effect.mapError(unavailable))
      return { file: record, presigned_url: presigned, expires_at: expiresAt(record) }
    })

    /** Stores the bytes of a pending file of the caller; more than the reserved size is refused. */
    const upload = Tracing.fn("Files.upload")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      key: string,
      body: Stream.Stream<Uint8Array, InvalidRequest>
    ) {
      yield* deploymentFor(principal, deploymentId)
      const file = yield* ownFile(principal, deploymentId, key, true)
      if (file.status === "ready") return yield* new FileComplete({ key })
      if (!DateTime.lessThan(yield* DateTime.now, expiresAt(file))) return yield* new UploadExpired({ key })
      // Bytes past the reserved size are read and dropped (up to a margin), so that the
      // client, still sending, receives the 413 instead of a reset connection.
      let seen = 0
      const limited = body.pipe(
        Stream.filter((chunk) => (seen += chunk.length) <= file.size),
        Stream.tap(() => (seen > file.size + overflowMargin ? Effect.fail(new FileTooLarge({ limit: file.size })) : Effect.void)),
        Stream.concat(Stream.suspend(() => (seen > file.size ? Stream.fail(new FileTooLarge({ limit: file.size })) : Stream.empty)))
      )
      const stored = yield* objects.put(uploadKey(file), limited, { contentType: file.content_type, maxBytes: file.size }).pipe(
        Effect.catchTags({
          ObjectTooLarge: () => Effect.fail(new FileTooLarge({ limit: file.size })),
          ObjectStoreError: (error) => Effect.fail(unavailable(error))
        })
      )
      // An upload that outlived the grace may find its reservation swept, and one that ran while the file was
      // completed came too late: either way its bytes must not stay behind.
      const after = yield* files.find(deploymentId, key)
      if (Option.isNone(after) || after.value.status === "ready") {
        yield* objects.delete(uploadKey(file)).pipe(Effect.mapError(unavailable))
        return yield* Option.isNone(after) ? new UploadExpired({ key }) : new FileComplete({ key })
      }
      return stored
    })

    /** Marks a file ready once its object exists with the reserved size; completing twice changes nothing. */
    const complete = Tracing.fn("Files.complete")(function*(principal: Principal, deploymentId: DeploymentId, key: string) {
      yield* deploymentFor(principal, deploymentId)
      const file = yield* ownFile(principal, deploymentId, key, true)
      if (file.status === "ready") return file
      if (isLapsed(file, yield* DateTime.now)) return yield* new UploadExpired({ key })
      const stored = yield* objects.head(uploadKey(file)).pipe(Effect.mapError(unavailable))
      const received = Option.match(stored, { onNone: () => 0, onSome: (o) => o.size })
      if (Option.isNone(stored) || received !== file.size) {
        return yield* new UploadIncomplete({ key, expected: file.size, received })
      }
      // The file's own object, which nothing but this copy writes; checked again, as an upload may have landed meanwhile.
      const copied = yield* objects.copy(uploadKey(file), objectKey(file)).pipe(Effect.mapError(unavailable))
      const size = Option.match(copied, { onNone: () => 0, onSome: (o) => o.size })
      if (size !== file.size) {
        yield* objects.delete(objectKey(file)).pipe(Effect.mapError(unavailable))
        return yield* new UploadIncomplete({ key, expected: file.size, received: size })
      }
      const ready = new FileRecord({ ...file, status: "ready" })
      yield* files.upsert(ready)
      yield* dropUpload(file)
      return ready
    })

    /** The caller's files on the deployment, newest first; a reservation past its grace is gone even before the sweep. */
    const list = Tracing.fn("Files.list")(function*(principal: Principal, deploymentId: DeploymentId) {
      yield* deploymentFor(principal, deploymentId)
      const all = yield* files.listFor(deploymentId, principal.user.id)
      const now = yield* DateTime.now
      return all.filter((file) => !isLapsed(file, now))
    })

    /** The caller's agent-produced file with that name; a name that is a path is refused (400). */
    const agentFileNamed = Effect.fnUntraced(function*(principal: Principal, deploymentId: DeploymentId, fileKey: string) {
      const bad = checkFilename(fileKey)
      if (Option.isSome(bad)) return yield* new InvalidRequest({ details: `fileKey: ${bad.value}` })
      return yield* ownFile(principal, deploymentId, agentFileKey(principal.user.id, fileKey), false)
    })

    /**
     * A ready file of the caller to download: by key (a reservation's, or one
     * seeded by fixtures), else an agent-produced file by its name. A name
     * that is a path is refused (400).
     */
    const download = Tracing.fn("Files.download")(function*(principal: Principal, deploymentId: DeploymentId, fileKey: string) {
      yield* deploymentFor(principal, deploymentId)
      const file = yield* (userKey.test(fileKey)
        ? ownFile(principal, deploymentId, fileKey, false)
        : ownFile(principal, deploymentId, fileKey, false).pipe(
          Effect.catchTag("FileNotFound", () => agentFileNamed(principal, deploymentId, fileKey))
        ))
      const disposition = contentDisposition(file.filename)
      const redirect = yield* objects.presignGet(objectKey(file), {
        expiresIn: config.downloadExpiry,
        contentType: file.content_type,
        contentDisposition: disposition
      }).pipe(Effect.mapError(unavailable))
      return { file, disposition, redirect }
    })

    /** The bytes of a file found by `download` (or a range of them). */
    const read = (file: FileRecord, range?: { readonly start: number; readonly end: number }) =>
      objects.get(objectKey(file), range).pipe(
        Effect.mapError(unavailable),
        orFail(() => new FileNotFound({ key: file.key })),
        Effect.map(Stream.mapError(unavailable))
      )

    /** Stores a file an agent produced for a user in a conversation; it is ready at once. */
    const storeAgentFile = Tracing.fn("Files.storeAgentFile")(function*(input: {
      readonly deployment_id: DeploymentId
      readonly owner_id: UserId
      readonly conversation_id: ConversationId
      readonly filename: string
      readonly content_type: string
      readonly body: Stream.Stream<Uint8Array, InvalidRequest>
    }) {
      const bad = checkFilename(input.filename)
      if (Option.isSome(bad)) return yield* new InvalidRequest({ details: `filename: ${bad.value}` })
      const key = agentFileKey(input.owner_id, input.filename)
      const target = { deployment_id: input.deployment_id, owner_id: input.owner_id, key }
      const stored = yield* objects.put(objectKey(target), input.body, {
        contentType: input.content_type,
        maxBytes: config.maxFileBytes
      }).pipe(
        Effect.catchTags({
          ObjectTooLarge: () => Effect.fail(new FileTooLarge({ limit: config.maxFileBytes })),
          ObjectStoreError: (error) => Effect.fail(unavailable(error))
        })
      )
      const record = new FileRecord({
        key,
        deployment_id: input.deployment_id,
        owner_id: input.owner_id,
        filename: input.filename,
        content_type: input.content_type,
        size: stored.size,
        status: "ready",
        origin: "agent",
        conversation_id: Option.some(input.conversation_id),
        created_at: yield* DateTime.now
      })
      yield* files.upsert(record)
      return record
    })

    /**
     * Removes the reservations past their grace, of every deployment, with
     * whatever bytes they got; answers how many it removed. The object goes
     * first, so that a failure leaves the record for the next sweep rather
     * than an object nothing points to (deleting a missing object is fine).
     * Ready files are never touched: a record is removed only while pending.
     * It also deletes, once their URL has expired, the upload objects of
     * files completed while it was still valid (a late PUT writes them again).
     */
    const sweep = Tracing.fn("Files.sweep")(function*() {
      yield* sweepLateUploads
      const horizon = lapsedBefore(yield* DateTime.now)
      let removed = 0
      while (true) {
        const batch = yield* files.pendingBefore(horizon, sweepBatch)
        let removedNow = 0
        for (const file of batch) {
          // The upload, and the file's own object if a completion copied it but never marked the file ready.
          yield* objects.delete(uploadKey(file)).pipe(Effect.mapError(unavailable))
          yield* objects.delete(objectKey(file)).pipe(Effect.mapError(unavailable))
          if (yield* files.removePending(file.deployment_id, file.key)) removedNow++
        }
        removed += removedNow
        // A full batch of which nothing was ours to remove (another process swept it): the next sweep goes on.
        if (batch.length < sweepBatch || removedNow === 0) return removed
      }
    })

    return { reserve, upload, complete, list, download, read, storeAgentFile, sweep } as const
  })
}) {}

/**
 * Sweeps expired reservations at start and then every `sweepInterval` of
 * FilesConfig, for the life of the layer. A failed sweep is logged and the
 * next one tries again.
 */
export const expirySweep = Layer.scopedDiscard(
  Effect.gen(function*() {
    const files = yield* Files
    const config = yield* FilesConfig
    yield* files.sweep().pipe(
      Effect.tap((removed) =>
        removed > 0 ? Effect.logInfo(`files: ${removed} pending uploads past their expiry removed`) : Effect.void
      ),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logWarning("files: the sweep of expired uploads failed", cause)
      ),
      Effect.repeat(Schedule.spaced(config.sweepInterval)),
      Effect.forkScoped
    )
  })
)

/**
 * `Content-Disposition: attachment` with the name in both forms of RFC 6266:
 * an ASCII fallback and the exact UTF-8 name (RFC 8187).
 */
export const contentDisposition = (filename: string): string => {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%]/g, "_")
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`
}
