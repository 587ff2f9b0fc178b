/**
 * The ObjectStore port on the local file system: the embedded default
 * (`HOSTING_OBJECT_STORE=fs:<dir>`). Paths are the SHA-256 of the object key,
 * so no path is ever built from user input. Writes go to a temporary file
 * that is fsynced and then renamed into place, so a reader sees the old
 * object or the whole new one, never a part. Each process writes its
 * temporary files in a folder of its own under `tmp/`, and the store sweeps
 * at start the folders of processes that are gone (killed in the middle of a
 * write), so that no part of an upload is left behind.
 */
import { ObjectStore } from "@hosting/core"
import { Effect, Layer, Option, Stream } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import { copyFile, link, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises"
import { hostname } from "node:os"
import { dirname, join } from "node:path"

/** Where the objects are kept. */
export interface FsObjectStoreConfig {
  readonly directory: string
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "ENOENT"

const failed = (operation: string) => (cause: unknown) =>
  new ObjectStore.ObjectStoreError({ reason: "Failed", message: `The file store could not ${operation}.`, cause })

/** Whether a process of this machine is running (EPERM: it is, as another user). */
const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The temporary folders of the stores this process made: never swept by another store of the same process. */
const ownFolders = new Set<string>()

/** How long another machine's temporary folder (a shared volume) stays untouched before it counts as left behind. */
const foreignFolderLifetimeMs = 24 * 60 * 60 * 1000

/**
 * Removes what writers that are gone left under `tmp/`: folders of this
 * machine whose process no longer runs (or had this process's pid, in an
 * earlier life), folders of other machines untouched for a day, and loose
 * files of older versions of this store untouched for as long.
 */
const sweepTemporary = async (temporary: string, host: string) => {
  const now = Date.now()
  for (const entry of await readdir(temporary, { withFileTypes: true })) {
    const path = join(temporary, entry.name)
    const parts = entry.isDirectory() ? /^(.*)\.(\d+)\.[0-9a-f]+$/.exec(entry.name) : null
    const gone = parts === null
      ? now - (await stat(path)).mtimeMs > foreignFolderLifetimeMs
      : parts[1] === host
      ? Number(parts[2]) === process.pid ? !ownFolders.has(path) : !isRunning(Number(parts[2]))
      : now - (await stat(path)).mtimeMs > foreignFolderLifetimeMs
    if (gone) await rm(path, { recursive: true, force: true })
  }
}

/** Builds the store; creates the directory when missing, and sweeps what killed writers left. */
export const make = (config: FsObjectStoreConfig) =>
  Effect.gen(function*() {
    const root = config.directory
    const host = hostname()
    const temporary = join(root, "tmp", `${host}.${process.pid}.${randomUUID().slice(0, 8)}`)
    yield* Effect.tryPromise({
      try: async () => {
        await mkdir(join(root, "tmp"), { recursive: true })
        await sweepTemporary(join(root, "tmp"), host)
        await mkdir(temporary)
        ownFolders.add(temporary)
      },
      catch: failed("create its directory")
    })

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
        ({ handle, path }) => {
          let size = 0
          return Effect.zipRight(
            Stream.runForEach(body, (chunk): Effect.Effect<void, ObjectStore.ObjectTooLarge | ObjectStore.ObjectStoreError> => {
              size += chunk.length
              if (size > options.maxBytes) return Effect.fail(new ObjectStore.ObjectTooLarge({ limit: options.maxBytes }))
              return Effect.asVoid(Effect.tryPromise({ try: () => handle.write(chunk), catch: failed("write") }))
            }),
            Effect.suspend(() => {
              const target = pathOf(key)
              return Effect.as(
                Effect.tryPromise({
                  try: async () => {
                    await handle.sync()
                    await handle.close()
                    await mkdir(dirname(target), { recursive: true })
                    await rename(path, target)
                  },
                  catch: failed("finish a write")
                }),
                // Read once the stream ran: `size` is counted while it runs.
                { key, size }
              )
            })
          )
        },
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

    /**
     * A hard link to the source under a temporary name, renamed into place: no byte is copied, and a
     * later write of the source (a new file renamed over it) leaves the copy as it is. Where links are
     * not supported, a copy of the bytes, synced, takes the link's place.
     */
    const copy = (from: string, to: string) =>
      Effect.tryPromise({
        try: async () => {
          const path = join(temporary, randomUUID())
          try {
            try {
              await link(pathOf(from), path)
            } catch (error) {
              if (isMissing(error)) return Option.none()
              await copyFile(pathOf(from), path)
              const handle = await open(path, "r+")
              await handle.sync().finally(() => handle.close())
            }
            const target = pathOf(to)
            await mkdir(dirname(target), { recursive: true })
            await rename(path, target)
            return Option.some({ key: to, size: (await stat(target)).size })
          } catch (error) {
            if (isMissing(error)) return Option.none()
            throw error
          } finally {
            await rm(path, { force: true })
          }
        },
        catch: failed("copy a file")
      }).pipe(Effect.withSpan("FsObjectStore.copy"))

    const remove = (key: string) =>
      Effect.tryPromise({ try: () => rm(pathOf(key), { force: true }), catch: failed("delete a file") }).pipe(
        Effect.withSpan("FsObjectStore.delete")
      )

    return ObjectStore.ObjectStore.of({
      put,
      head,
      get,
      copy,
      delete: remove,
      presignGet: () => Effect.succeed(Option.none()),
      presignPut: () => Effect.succeed(Option.none())
    })
  })

/** The store as a Layer. */
export const layer = (config: FsObjectStoreConfig) => Layer.effect(ObjectStore.ObjectStore, make(config))
