/**
 * Objects in memory: a test double that passes the object store contract.
 * It cannot presign.
 */
import { ObjectStore } from "@hosting/core"
import { Chunk, Effect, Layer, Option, Stream } from "effect"

export const make = Effect.sync(() => {
  const objects = new Map<string, Uint8Array>()
  return ObjectStore.ObjectStore.of({
    put: (key, body, options) =>
      Effect.gen(function*() {
        let size = 0
        const parts = yield* body.pipe(
          Stream.mapEffect((part) => {
            size += part.length
            return size > options.maxBytes ? Effect.fail(new ObjectStore.ObjectTooLarge({ limit: options.maxBytes })) : Effect.succeed(part)
          }),
          Stream.runCollect
        )
        const bytes = new Uint8Array(size)
        let offset = 0
        for (const part of Chunk.toReadonlyArray(parts)) {
          bytes.set(part, offset)
          offset += part.length
        }
        objects.set(key, bytes)
        return { key, size }
      }),
    head: (key) => Effect.sync(() => Option.map(Option.fromNullable(objects.get(key)), (bytes) => ({ key, size: bytes.length }))),
    get: (key, range) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(objects.get(key)), (bytes) =>
          Stream.make(range === undefined ? bytes : bytes.subarray(range.start, range.end + 1)))
      ),
    copy: (from, to) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(objects.get(from)), (bytes) => {
          // Objects are replaced, never changed in place, so the copy may share the bytes.
          objects.set(to, bytes)
          return { key: to, size: bytes.length }
        })
      ),
    delete: (key) => Effect.sync(() => void objects.delete(key)),
    presignGet: () => Effect.succeed(Option.none()),
    presignPut: () => Effect.succeed(Option.none())
  })
})

/** A fresh, empty store. */
export const layer = Layer.effect(ObjectStore.ObjectStore, make)
