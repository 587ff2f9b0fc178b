/**
 * A ready file's bytes never change, on any object store: an upload after
 * `complete` is refused (`FileComplete`), one still running when the file
 * completes is refused at its end and leaves nothing, and with a store that
 * presigns, a PUT with the reservation's URL after `complete` reaches only
 * the upload object, which the sweep deletes once the URL has expired.
 * Every object store runs it with one line (`Files` over the store given).
 */
import { describe, expect, it } from "@effect/vitest"
import { Files, ObjectStore } from "@hosting/core"
import { Chunk, Deferred, Effect, Fiber, type Layer, Option, Stream, TestClock } from "effect"
import * as Seed from "./Seed.js"
import * as TestServices from "./TestServices.js"

const encode = (text: string) => new TextEncoder().encode(text)

const textOf = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => new TextDecoder().decode(Buffer.concat(Chunk.toReadonlyArray(chunks))))

/** A member of a team with a deployment, and a reservation of theirs for `size` bytes. */
const reservation = (size: number) =>
  Effect.gen(function*() {
    const team = yield* Seed.team
    const deployment = (yield* Seed.deployment(team)).id
    const member = team.principals.member
    const files = yield* Files.Files
    const reserved = yield* files.reserve(member, deployment, { filename: "notes.txt", content_type: "text/plain", size })
    return { files, member, deployment, reserved, file: reserved.file }
  })

/** The bytes of the file's own object, and whether its upload object is still there. */
const objectsOf = (file: Parameters<typeof Files.objectKey>[0]) =>
  Effect.gen(function*() {
    const objects = yield* ObjectStore.ObjectStore
    const own = yield* objects.get(Files.objectKey(file))
    return {
      bytes: Option.isSome(own) ? yield* textOf(own.value) : undefined,
      upload: Option.isSome(yield* objects.head(Files.uploadKey(file)))
    }
  })

/** Runs the suite on the use cases over `objectStore` (a fresh one per suite); `presigns` for a store whose uploads go to presigned URLs. */
export const run = <E>(name: string, objectStore: Layer.Layer<ObjectStore.ObjectStore, E>, options: { readonly presigns: boolean }) =>
  describe(`ready files never change: ${name}`, () => {
    it.layer(TestServices.make({ objectStoreLayer: objectStore as Layer.Layer<ObjectStore.ObjectStore> }), { timeout: 60_000 })((it) => {
      it.effect("an upload after complete is FileComplete and the file keeps its bytes; none is left at the upload key", () =>
        Effect.gen(function*() {
          const { deployment, file, files, member } = yield* reservation(4)
          yield* files.upload(member, deployment, file.key, Stream.make(encode("abcd")))
          expect((yield* files.complete(member, deployment, file.key)).status).toBe("ready")
          expect(yield* objectsOf(file)).toEqual({ bytes: "abcd", upload: false })
          const late = yield* Effect.flip(files.upload(member, deployment, file.key, Stream.make(encode("wxyz"))))
          expect(late._tag).toBe("FileComplete")
          expect(yield* objectsOf(file)).toEqual({ bytes: "abcd", upload: false })
        }))

      it.effect("an upload still running when the file completes is refused at its end and leaves nothing", () =>
        Effect.gen(function*() {
          const { deployment, file, files, member } = yield* reservation(4)
          yield* files.upload(member, deployment, file.key, Stream.make(encode("abcd")))
          const halfway = yield* Deferred.make<void>()
          const resume = yield* Deferred.make<void>()
          const slow = Stream.concat(
            Stream.make(encode("wx")),
            Stream.fromEffect(Effect.zipRight(Deferred.succeed(halfway, undefined), Deferred.await(resume))).pipe(Stream.map(() => encode("yz")))
          )
          const running = yield* Effect.fork(files.upload(member, deployment, file.key, slow))
          yield* Deferred.await(halfway)
          yield* files.complete(member, deployment, file.key)
          yield* Deferred.succeed(resume, undefined)
          const late = yield* Effect.flip(Fiber.join(running))
          expect(late._tag).toBe("FileComplete")
          expect(yield* objectsOf(file)).toEqual({ bytes: "abcd", upload: false })
        }))

      if (!options.presigns) return
      it.effect("a PUT with a presigned upload URL after complete changes nothing; the sweep deletes what it wrote once the URL expired", () =>
        Effect.gen(function*() {
          const { deployment, file, files, member, reserved } = yield* reservation(4)
          expect(Option.isSome(reserved.presigned_url)).toBe(true)
          const put = (body: string) =>
            Effect.promise(() =>
              fetch(Option.getOrThrow(reserved.presigned_url), { method: "PUT", headers: { "content-type": "text/plain" }, body })
            ).pipe(Effect.map((response) => response.status))
          expect(yield* put("abcd")).toBe(200)
          yield* files.complete(member, deployment, file.key)
          // The store takes the late PUT (the URL is valid) but it lands at the upload key, not the file's.
          expect(yield* put("wxyz")).toBe(200)
          expect(yield* objectsOf(file)).toEqual({ bytes: "abcd", upload: true })
          const download = yield* files.download(member, deployment, file.key)
          const fetched = yield* Effect.promise(() => fetch(Option.getOrThrow(download.redirect)).then((r) => r.text()))
          expect(fetched).toBe("abcd")
          // Before the URL expired the upload object stays; after, the sweep deletes it and leaves the file.
          yield* files.sweep()
          expect((yield* objectsOf(file)).upload).toBe(true)
          yield* TestClock.adjust("17 minutes")
          yield* files.sweep()
          expect(yield* objectsOf(file)).toEqual({ bytes: "abcd", upload: false })
          expect((yield* files.list(member, deployment)).map((f) => [f.key, f.status])).toEqual([[file.key, "ready"]])
        }))
    })
  })
