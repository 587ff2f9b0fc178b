/**
 * S3 servers for the tests: s3rver in-process (always) and a Ceph RADOS
 * Gateway started outside the tests (when one answers). Each layer provides
 * the store under test and a raw client to look behind it, and removes what
 * it created when released.
 */
import S3rver from "@20minutes/s3rver"
import {
  AbortMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client
} from "@aws-sdk/client-s3"
import type { ObjectStore } from "@hosting/core"
import { S3ObjectStore } from "@hosting/object-store-s3"
import { Context, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import type { IncomingMessage } from "node:http"
import { join } from "node:path"

/** What a test may use beside the port: the config the store was built with and a raw client. */
export class S3Target extends Context.Tag("test/S3Target")<S3Target, {
  readonly config: S3ObjectStore.S3ObjectStoreConfig
  readonly client: S3Client
  /** s3rver implements neither ListMultipartUploads nor AbortMultipartUpload, and gives multipart objects plain ETags. */
  readonly realS3: boolean
  /** The requests the server saw ("METHOD /path?query"), when the test runs the server itself. */
  readonly requests: ReadonlyArray<string> | undefined
}>() {}

/** The smallest part S3 accepts, so a 12 MiB upload takes three parts. */
const partSize = 5 * 1024 * 1024

const uniqueBucket = () => `hosting-test-${randomUUID().slice(0, 8)}`

const rawClient = (config: S3ObjectStore.S3ObjectStoreConfig) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      new S3Client({
        region: config.region ?? "us-east-1",
        forcePathStyle: true,
        ...(config.endpoint === undefined ? {} : { endpoint: config.endpoint }),
        ...(config.credentials === undefined ? {} : {
          credentials: { accessKeyId: config.credentials.accessKeyId, secretAccessKey: String(config.credentials.secretAccessKey) }
        })
      })
    ),
    (client) => Effect.sync(() => client.destroy())
  )

const storeFor = (config: S3ObjectStore.S3ObjectStoreConfig, realS3: boolean, requests?: ReadonlyArray<string>) =>
  Layer.merge(
    S3ObjectStore.layer(config),
    Layer.scoped(S3Target, Effect.map(rawClient(config), (client) => ({ config, client, realS3, requests })))
  )

/** s3rver on a free loopback port with its data in a temporary folder; both gone on release. */
export const s3rver: Layer.Layer<ObjectStore.ObjectStore | S3Target, unknown> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const directory = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "hosting-s3rver-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory })
    const address = yield* Effect.acquireRelease(
      Effect.promise(() => server.run()),
      () => Effect.promise(() => server.close().catch(() => undefined))
    )
    const requests: Array<string> = []
    // A second 'request' listener only observes; s3rver's own listener still answers.
    server.httpServer?.on("request", (request: IncomingMessage) => requests.push(`${request.method} ${request.url}`))
    return storeFor({
      bucket: uniqueBucket(),
      endpoint: `http://127.0.0.1:${address.port}`,
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      createBucket: true,
      partSize
    }, false, requests)
  })
)

/** Where the Ceph RADOS Gateway of `shared/tools/ceph-up.sh` answers, unless told otherwise. */
export const rgwEndpoint = process.env["HOSTING_TEST_S3_ENDPOINT"] ?? `http://127.0.0.1:${process.env["RGW_PORT"] ?? "7480"}`

/** Whether anything answers HTTP at the RGW endpoint. */
export const rgwAnswers = async () => {
  try {
    await fetch(rgwEndpoint, { signal: AbortSignal.timeout(2_000) })
    return true
  } catch {
    return false
  }
}

/** Empties and deletes a bucket; bounded, since a test bucket holds few objects. */
const removeBucket = (client: S3Client, bucket: string) =>
  Effect.promise(async () => {
    for (let page = 0; page < 100; page++) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }))
      const keys = (listed.Contents ?? []).flatMap((o) => (o.Key === undefined ? [] : [{ Key: o.Key }]))
      if (keys.length === 0) break
      await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }))
    }
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }))
    for (const upload of uploads.Uploads ?? []) {
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }))
    }
    await client.send(new DeleteBucketCommand({ Bucket: bucket }))
  }).pipe(Effect.catchAllDefect((defect) => Effect.logWarning("could not remove the test bucket", defect)))

/** A fresh bucket on the RGW, emptied and deleted on release. */
export const rgw: Layer.Layer<ObjectStore.ObjectStore | S3Target, unknown> = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config: S3ObjectStore.S3ObjectStoreConfig = {
      bucket: uniqueBucket(),
      endpoint: rgwEndpoint,
      credentials: {
        accessKeyId: process.env["HOSTING_TEST_S3_ACCESS_KEY"] ?? "TESTKEY",
        secretAccessKey: process.env["HOSTING_TEST_S3_SECRET_KEY"] ?? "TESTSECRET"
      },
      createBucket: true,
      partSize
    }
    const cleaner = yield* rawClient(config)
    // Registered before the store exists, so it runs after the store's client is gone.
    yield* Effect.addFinalizer(() => removeBucket(cleaner, config.bucket))
    return storeFor(config, true)
  })
)
