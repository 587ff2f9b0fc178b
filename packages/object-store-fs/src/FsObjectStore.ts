/**
 * The ObjectStore port on the local file system: the embedded default
 * (`HOSTING_OBJECT_STORE=fs:<dir>`). Paths are the SHA-256 of the object key,
 * so no path is ever built from user input. Writes go to a temporary file
 * that is fsynced and then renamed into place, so a reader sees the old
 * object or the whole new one, never a part.
 */
import { ObjectStore } from "@hosting/core"
import { Effect, Layer, Option, Stream } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import { mkdir, open, rename, rm, stat } from "node:fs/promises"
import { dirname, join } from "node:path"

/** Where the objects are kept. */
export interface FsObjectStoreConfig {
  readonly directory: string
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "ENOENT"

const failed = (operation: string) => (cause: unknown) =>
  new ObjectStore.ObjectStoreError({ reason: "Failed", message: `The file store could not ${operation}.`, cause })

/** Builds the store; creates the directory when missing. */
export const make = (config: FsObjectStoreConfig) =>
  Effect.gen(function*() {
    const root = config.directory
    const temporary = join(root, "tmp")
    yield* Effect.tryPromise({ try: () => mkdir(temporary, { recursive: true }), catch: failed("create its directory") })

    const pathOf = (key: string) => {
      const hash = createHash("sha256").update(key).digest("hex")
      return join(root, "objects", hash.slice(0, 2), hash)
    }

    const put: ObjectStore.ObjectStore["Type"]["put"] = (key, body, options) =>
      Effect.acquireUseRelease(
        Effect.tryPromise({
          try: async () => {
            const path = join(temporary, randomUUID())
            return { path, handle: await open(path, "wx") }
          },
          catch: failed("start a write")
        }),
        ({ handle, path }) =>
          Effect.gen(function*() {
            let size = 0
            yield* Stream.runForEach(body, (chunk): Effect.Effect<void, ObjectStore.ObjectTooLarge | ObjectStore.ObjectStoreError> => {
              size += chunk.length
              if (size > options.maxBytes) return Effect.fail(new ObjectStore.ObjectTooLarge({ limit: options.maxBytes }))
              return Effect.asVoid(Effect.tryPromise({ try: () => handle.write(chunk), catch: failed("write") }))
            })
            const target = pathOf(key)
            yield* Effect.tryPromise({
              try: async () => {
                await handle.sync()
                await handle.close()
                await mkdir(dirname(target), { recursive: true })
                await rename(path, target)
              },
              catch: failed("finish a write")
            })
            return { key, size }
          }),
        ({ handle, path }) =>
          // After a successful rename the temporary path no longer exists; rm with force ignores that.
          Effect.promise(() => handle.close().catch(() => undefined).then(() => rm(path, { force: true })))
      ).pipe(Effect.withSpan("FsObjectStore.put"))

    const head = (key: string) =>
      Effect.tryPromise({
        try: async () => {
          try {
            const info = await stat(pathOf(key))
            return Option.some({ key, size: info.size })
          } catch (error) {
            if (isMissing(error)) return Option.none()
            throw error
          }
        },
        catch: failed("read a file's size")
      }).pipe(Effect.withSpan("FsObjectStore.head"))

    const get: ObjectStore.ObjectStore["Type"]["get"] = (key, range) =>
      Effect.map(head(key), (found) =>
        Option.map(found, () =>
          Stream.fromAsyncIterable(
            createReadStream(pathOf(key), range === undefined ? {} : { start: range.start, end: range.end }) as AsyncIterable<Buffer>,
            failed("read a file")
          ).pipe(Stream.map((chunk) => new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))))
      ).pipe(Effect.withSpan("FsObjectStore.get"))

    const remove = (key: string) =>
      Effect.tryPromise({ try: () => rm(pathOf(key), { force: true }), catch: failed("delete a file") }).pipe(
        Effect.withSpan("FsObjectStore.delete")
      )

    return ObjectStore.ObjectStore.of({
      put,
      head,
      get,
      delete: remove,
      presignGet: () => Effect.succeed(Option.none()),
      presignPut: () => Effect.succeed(Option.none())
    })
  })

/** The store as a Layer. */
export const layer = (config: FsObjectStoreConfig) => Layer.effect(ObjectStore.ObjectStore, make(config))
