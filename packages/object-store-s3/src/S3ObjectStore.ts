/**
 * The ObjectStore port on S3 and S3-compatible stores (Ceph RGW, MinIO, ...).
 * Uploads stream through a bounded multipart scheme: at most one part is held
 * in memory, small objects go up with one PutObject at the end, large ones as
 * a multipart upload that is aborted on any failure, so a failed or oversize
 * upload never leaves an object behind (S3 replaces objects atomically).
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  type CompletedPart,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand
} from "@aws-sdk/client-s3"
import { getSignedUrl } from "@aws-sdk/s3-request-presigner"
import { ObjectStore } from "@hosting/core"
import { Config, type ConfigError, Duration, Effect, Layer, Option, Redacted, Stream } from "effect"
import type { Readable } from "node:stream"

/** Where the objects are kept and how to reach the store. */
export interface S3ObjectStoreConfig {
  readonly bucket: string
  /** Defaults to "us-east-1", which S3-compatible stores usually accept. */
  readonly region?: string
  /** A custom endpoint for S3-compatible stores, e.g. "http://127.0.0.1:7480". */
  readonly endpoint?: string
  /** Path-style URLs (`host/bucket/key`); defaults to true when an endpoint is given. */
  readonly forcePathStyle?: boolean
  /** Static keys; without them the SDK's default credential chain is used. */
  readonly credentials?: {
    readonly accessKeyId: string
    readonly secretAccessKey: Redacted.Redacted<string> | string
  }
  /** Create the bucket at start when missing (tests and development). */
  readonly createBucket?: boolean
  /** Bytes per multipart part, at least 5 MiB (S3's minimum); the memory one upload holds. Default 8 MiB. */
  readonly partSize?: number
  /** Attempts per request, retries included; the SDK's default (3) when unset. */
  readonly maxAttempts?: number
}

const mebibyte = 1024 * 1024
/** S3 refuses parts smaller than this, except the last one. */
const minimumPartSize = 5 * mebibyte
/** S3 refuses presigned URLs valid for longer than a week. */
const maximumExpirySeconds = 7 * 24 * 60 * 60

const networkCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
  "UND_ERR_SOCKET"
])
const unavailableNames = new Set([
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  "ServiceUnavailable",
  "SlowDown",
  "InternalError",
  "ThrottlingException"
])

interface SdkError {
  readonly name?: string
  readonly code?: string
  readonly cause?: unknown
  readonly errors?: ReadonlyArray<unknown>
  readonly $metadata?: { readonly httpStatusCode?: number }
}

const statusOf = (error: unknown): number | undefined => (error as SdkError | undefined)?.$metadata?.httpStatusCode

/** Network failures arrive as plain Node errors, sometimes wrapped (cause) or grouped (AggregateError). */
const isUnavailable = (error: unknown, depth = 0): boolean => {
  if (typeof error !== "object" || error === null || depth > 3) return false
  const e = error as SdkError
  const status = statusOf(e)
  if (status !== undefined && status >= 500) return true
  if (e.code !== undefined && networkCodes.has(e.code)) return true
  if (e.name !== undefined && unavailableNames.has(e.name)) return true
  if (Array.isArray(e.errors) && e.errors.some((inner) => isUnavailable(inner, depth + 1))) return true
  return isUnavailable(e.cause, depth + 1)
}

const isNotFound = (error: unknown) => {
  const name = (error as SdkError | undefined)?.name
  return statusOf(error) === 404 || name === "NotFound" || name === "NoSuchKey"
}

const failure = (operation: string) => (cause: unknown) =>
  isUnavailable(cause)
    ? new ObjectStore.ObjectStoreError({ reason: "Unavailable", message: `The object store is not reachable (${operation}).`, cause })
    : new ObjectStore.ObjectStoreError({ reason: "Failed", message: `The object store could not ${operation}.`, cause })

const expirySeconds = (duration: Duration.Duration) =>
  Math.min(maximumExpirySeconds, Math.max(1, Math.ceil(Duration.toSeconds(duration))))

const concat = (chunks: ReadonlyArray<Uint8Array>, length: number) => Buffer.concat(chunks, length)

/** Builds the store; the client is destroyed when the scope closes. */
export const make = (config: S3ObjectStoreConfig) =>
  Effect.gen(function*() {
    const bucket = config.bucket
    const partSize = Math.max(minimumPartSize, config.partSize ?? 8 * mebibyte)
    const clientConfig: S3ClientConfig = {
      region: config.region ?? "us-east-1",
      forcePathStyle: config.forcePathStyle ?? config.endpoint !== undefined,
      // Checksums on every request would be signed into presigned PUTs, which browsers and curl cannot send.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
      ...(config.maxAttempts === undefined ? {} : { maxAttempts: config.maxAttempts }),
      ...(config.credentials === undefined ? {} : {
        credentials: {
          accessKeyId: config.credentials.accessKeyId,
          secretAccessKey: Redacted.isRedacted(config.credentials.secretAccessKey)
            ? Redacted.value(config.credentials.secretAccessKey)
            : config.credentials.secretAccessKey
        }
      })
    }
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new S3Client(clientConfig)),
      (client) => Effect.sync(() => client.destroy())
    )

    // The abort signal cancels the HTTP request when the fiber is interrupted.
    const send = <A>(operation: string, run: (abortSignal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: run, catch: failure(operation) })

    if (config.createBucket === true) {
      yield* send("check the bucket", (abortSignal) => client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal })).pipe(
        Effect.catchIf(
          (error) => isNotFound(error.cause),
          () =>
            send("create the bucket", (abortSignal) => client.send(new CreateBucketCommand({ Bucket: bucket }), { abortSignal })).pipe(
              // Another process may have created it meanwhile.
              Effect.catchIf((error) => (error.cause as SdkError | undefined)?.name === "BucketAlreadyOwnedByYou", () => Effect.void)
            )
        ),
        Effect.withSpan("S3ObjectStore.createBucket", { attributes: { bucket } })
      )
    }

    const put: ObjectStore.ObjectStore["Type"]["put"] = (key, body, options) =>
      Effect.suspend(() => {
        let size = 0
        let pending: Array<Uint8Array> = []
        let pendingBytes = 0
        let uploadId: string | undefined
        const parts: Array<CompletedPart> = []

        const takePending = () => {
          const bytes = concat(pending, pendingBytes)
          pending = []
          pendingBytes = 0
          return bytes
        }

        const uploadPart = (id: string, bytes: Buffer) => {
          const partNumber = parts.length + 1
          return send("store a part of an object", (abortSignal) =>
            client.send(
              new UploadPartCommand({
                Bucket: bucket,
                Key: key,
                UploadId: id,
                PartNumber: partNumber,
                Body: bytes,
                ContentLength: bytes.length
              }),
              { abortSignal }
            )).pipe(Effect.map((result) => {
              parts.push({ PartNumber: partNumber, ETag: result.ETag })
            }))
        }

        const flushPart = Effect.suspend(() => {
          if (uploadId !== undefined) return uploadPart(uploadId, takePending())
          return Effect.flatMap(
            send("start a multipart upload", (abortSignal) =>
              client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: options.contentType }), { abortSignal })),
            (created) => {
              if (created.UploadId === undefined) {
                return Effect.fail(failure("start a multipart upload")(new Error("CreateMultipartUpload returned no UploadId")))
              }
              uploadId = created.UploadId
              return uploadPart(uploadId, takePending())
            }
          )
        })

        const consume = Stream.runForEach(body, (chunk): Effect.Effect<void, ObjectStore.ObjectTooLarge | ObjectStore.ObjectStoreError> => {
          size += chunk.length
          if (size > options.maxBytes) return Effect.fail(new ObjectStore.ObjectTooLarge({ limit: options.maxBytes }))
          if (chunk.length > 0) {
            pending.push(chunk)
            pendingBytes += chunk.length
          }
          return pendingBytes >= partSize ? flushPart : Effect.void
        })

        const finish = Effect.suspend(() => {
          if (uploadId === undefined) {
            const bytes = takePending()
            return send("store an object", (abortSignal) =>
              client.send(
                new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.length, ContentType: options.contentType }),
                { abortSignal }
              ))
          }
          const id = uploadId
          return (pendingBytes > 0 ? uploadPart(id, takePending()) : Effect.void).pipe(
            Effect.zipRight(send("complete a multipart upload", (abortSignal) =>
              client.send(
                new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: id, MultipartUpload: { Parts: parts } }),
                { abortSignal }
              )))
          )
        })

        // An unfinished multipart upload keeps its parts (and their cost) until aborted; failure or interruption aborts it.
        const abort = Effect.suspend(() => {
          const id = uploadId
          if (id === undefined) return Effect.void
          return send("abort a multipart upload", () => client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: id }))).pipe(
            Effect.catchAll((error) => Effect.logWarning("S3ObjectStore: could not abort a multipart upload", error)),
            Effect.withSpan("S3ObjectStore.abortMultipartUpload")
          )
        })

        return consume.pipe(
          Effect.zipRight(finish),
          Effect.onError(() => abort),
          // Read after the stream ran: `size` is counted while it runs.
          Effect.map(() => ({ key, size }))
        )
      }).pipe(Effect.withSpan("S3ObjectStore.put", { attributes: { bucket, key } }))

    const head = (key: string) =>
      send("read an object's size", (abortSignal) => client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), { abortSignal })).pipe(
        Effect.map((result) => Option.some({ key, size: result.ContentLength ?? 0 })),
        Effect.catchIf((error) => isNotFound(error.cause), () => Effect.succeed(Option.none<ObjectStore.ObjectInfo>())),
        Effect.withSpan("S3ObjectStore.head", { attributes: { bucket, key } })
      )

    const get: ObjectStore.ObjectStore["Type"]["get"] = (key, range) =>
      send("read an object", (abortSignal) =>
        client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ...(range === undefined ? {} : { Range: `bytes=${range.start}-${range.end}` })
          }),
          { abortSignal }
        )).pipe(
          Effect.map((result) => {
            // In Node the body is an http.IncomingMessage; iterating it reads the socket as the consumer pulls.
            const readable = result.Body as Readable | undefined
            if (readable === undefined) return Option.some(Stream.empty)
            return Option.some(
              Stream.fromAsyncIterable(readable as AsyncIterable<Uint8Array>, failure("read an object")).pipe(
                Stream.map((chunk) => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
                // A consumer that stops early must not leave the connection open.
                Stream.ensuring(Effect.sync(() => readable.destroy()))
              )
            )
          }),
          Effect.catchIf(
            (error) => isNotFound(error.cause),
            () => Effect.succeed(Option.none<Stream.Stream<Uint8Array, ObjectStore.ObjectStoreError>>())
          ),
          Effect.withSpan("S3ObjectStore.get", { attributes: { bucket, key } })
        )

    /** A copy made by the store itself (one request, the bytes never leave it); objects are at most 5 GB. */
    const copy = (from: string, to: string) =>
      send("copy an object", (abortSignal) =>
        client.send(
          // The source is `bucket/key`, percent-encoded; `/` and the characters of our keys stay as they are.
          new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: encodeURI(`${bucket}/${from}`) }),
          { abortSignal }
        )).pipe(
          Effect.zipRight(head(to)),
          Effect.catchIf((error) => isNotFound(error.cause), () => Effect.succeed(Option.none<ObjectStore.ObjectInfo>())),
          Effect.withSpan("S3ObjectStore.copy", { attributes: { bucket, from, to } })
        )

    const remove = (key: string) =>
      send("delete an object", (abortSignal) => client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }), { abortSignal })).pipe(
        Effect.asVoid,
        Effect.withSpan("S3ObjectStore.delete", { attributes: { bucket, key } })
      )

    const presignGet: ObjectStore.ObjectStore["Type"]["presignGet"] = (key, options) =>
      send("presign a download", () =>
        getSignedUrl(
          client,
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ResponseContentType: options.contentType,
            ResponseContentDisposition: options.contentDisposition
          }),
          { expiresIn: expirySeconds(options.expiresIn) }
        )).pipe(Effect.map(Option.some), Effect.withSpan("S3ObjectStore.presignGet", { attributes: { bucket, key } }))

    const presignPut: ObjectStore.ObjectStore["Type"]["presignPut"] = (key, options) =>
      send("presign an upload", () =>
        getSignedUrl(
          client,
          new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: options.contentType, ContentLength: options.size }),
          // Signing content-type as a header makes the store refuse an upload of any other type.
          { expiresIn: expirySeconds(options.expiresIn), signableHeaders: new Set(["content-type"]) }
        )).pipe(Effect.map(Option.some), Effect.withSpan("S3ObjectStore.presignPut", { attributes: { bucket, key } }))

    return ObjectStore.ObjectStore.of({ put, head, get, copy, delete: remove, presignGet, presignPut })
  })

/** The store as a Layer. */
export const layer = (config: S3ObjectStoreConfig): Layer.Layer<ObjectStore.ObjectStore, ObjectStore.ObjectStoreError> =>
  Layer.scoped(ObjectStore.ObjectStore, make(config))

/** The store as a Layer, its settings read from Config. */
export const layerConfig = (
  config: Config.Config.Wrap<S3ObjectStoreConfig>
): Layer.Layer<ObjectStore.ObjectStore, ObjectStore.ObjectStoreError | ConfigError.ConfigError> =>
  Layer.scoped(ObjectStore.ObjectStore, Effect.flatMap(Config.unwrap(config), make))
