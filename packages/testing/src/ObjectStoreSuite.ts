/**
 * The contract of the ObjectStore port; every object store runs it with one
 * line. Stores that presign are checked for it by their own tests.
 */
import { describe, expect, it } from "@effect/vitest"
import { ObjectStore } from "@hosting/core"
import { Chunk, Effect, type Layer, Option, Stream } from "effect"
import { uniqueName } from "./StorageSuite.js"

const text = (s: string) => new TextEncoder().encode(s)
const read = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Stream.runCollect(stream).pipe(
    Effect.map((chunks) => new TextDecoder().decode(Buffer.concat(Chunk.toReadonlyArray(chunks).map((c) => Buffer.from(c)))))
  )
const key = () => `tests/${uniqueName("obj")}`

/** Runs the object store contract against a layer providing the port. */
export const run = <E>(name: string, layer: Layer.Layer<ObjectStore.ObjectStore, E>) => {
  describe(`object store contract: ${name}`, () => {
    it.layer(layer, { timeout: 60_000 })((it) => {
      it.effect("put stores the bytes of a stream; head gives the size; get streams them back", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          const info = yield* store.put(k, Stream.make(text("hello "), text("world")), { contentType: "text/plain", maxBytes: 100 })
          expect(info.size).toBe(11)
          expect(Option.getOrThrow(yield* store.head(k)).size).toBe(11)
          expect(yield* read(Option.getOrThrow(yield* store.get(k)))).toBe("hello world")
        }))

      it.effect("a byte range reads the inclusive range", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          yield* store.put(k, Stream.make(text("0123456789")), { contentType: "text/plain", maxBytes: 100 })
          expect(yield* read(Option.getOrThrow(yield* store.get(k, { start: 2, end: 5 })))).toBe("2345")
          expect(yield* read(Option.getOrThrow(yield* store.get(k, { start: 9, end: 9 })))).toBe("9")
        }))

      it.effect("more bytes than maxBytes fail with ObjectTooLarge and store nothing; an earlier object stays whole", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          const tooBig = yield* Effect.flip(store.put(k, Stream.make(text("12345"), text("678")), { contentType: "text/plain", maxBytes: 6 }))
          expect(tooBig._tag).toBe("ObjectTooLarge")
          expect(Option.isNone(yield* store.head(k))).toBe(true)
          yield* store.put(k, Stream.make(text("kept")), { contentType: "text/plain", maxBytes: 6 })
          yield* Effect.flip(store.put(k, Stream.make(text("replacement")), { contentType: "text/plain", maxBytes: 6 }))
          expect(yield* read(Option.getOrThrow(yield* store.get(k)))).toBe("kept")
        }))

      it.effect("a failing upload stream stores nothing", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          const body = Stream.concat(Stream.make(text("part")), Stream.fail("connection lost" as const))
          expect(yield* Effect.flip(store.put(k, body, { contentType: "text/plain", maxBytes: 100 }))).toBe("connection lost")
          expect(Option.isNone(yield* store.head(k))).toBe(true)
        }))

      it.effect("missing objects: head and get give None, delete is not an error; delete removes", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          expect(Option.isNone(yield* store.head(k))).toBe(true)
          expect(Option.isNone(yield* store.get(k))).toBe(true)
          yield* store.delete(k)
          yield* store.put(k, Stream.make(text("x")), { contentType: "text/plain", maxBytes: 10 })
          yield* store.delete(k)
          expect(Option.isNone(yield* store.head(k))).toBe(true)
        }))

      it.effect("copy replaces the target with the source's bytes, which stay when the source is written again or deleted", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const from = key()
          const to = key()
          expect(Option.isNone(yield* store.copy(from, to))).toBe(true)
          expect(Option.isNone(yield* store.head(to))).toBe(true)
          yield* store.put(to, Stream.make(text("old")), { contentType: "text/plain", maxBytes: 10 })
          yield* store.put(from, Stream.make(text("first")), { contentType: "text/plain", maxBytes: 10 })
          expect(yield* store.copy(from, to)).toEqual(Option.some({ key: to, size: 5 }))
          yield* store.put(from, Stream.make(text("second")), { contentType: "text/plain", maxBytes: 10 })
          expect(yield* read(Option.getOrThrow(yield* store.get(to)))).toBe("first")
          yield* store.delete(from)
          expect(yield* read(Option.getOrThrow(yield* store.get(to)))).toBe("first")
        }))

      it.effect("an empty object is an object", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          expect((yield* store.put(k, Stream.empty, { contentType: "text/plain", maxBytes: 10 })).size).toBe(0)
          expect(Option.getOrThrow(yield* store.head(k)).size).toBe(0)
          expect(yield* read(Option.getOrThrow(yield* store.get(k)))).toBe("")
        }))
    })
  })
}
