/**
 * Use-case tests of reservation expiry, on the test clock: an upload URL
 * expires 15 minutes after the reservation, the reservation can still be
 * completed for a 15-minute grace, and then the sweep removes it with its
 * bytes. Ready files are never touched.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deployment, Files, ObjectStore, Ports } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { Deferred, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"

const encode = (text: string) => new TextEncoder().encode(text)

/** A team, a deployment of theirs, and the member's principal. */
const setup = Effect.gen(function*() {
  const team = yield* Seed.team
  const { id } = yield* Seed.deployment(team)
  return { deployment: id, member: team.principals.member }
})

const reserveAs = (member: Seed.Team["principals"]["member"], deployment: Deployment.DeploymentId, content: string) =>
  Effect.flatMap(Files.Files, (files) =>
    files.reserve(member, deployment, { filename: "notes.txt", content_type: "text/plain", size: encode(content).length }))

/** The file's object: its own once complete, else its upload. */
const objectOf = (file: Parameters<typeof Files.objectKey>[0]) =>
  Effect.flatMap(ObjectStore.ObjectStore, (objects) =>
    Effect.map(
      Effect.all([objects.head(Files.objectKey(file)), objects.head(Files.uploadKey(file))]),
      ([own, upload]) => Option.orElse(own, () => upload)
    ))

const recordOf = (deployment: Deployment.DeploymentId, key: string) =>
  Effect.flatMap(Ports.FileStore, (store) => store.find(deployment, key))

describe("Files: reservation expiry", () => {
  it.layer(TestServices.layer)((it) => {
    it.effect("the sweep removes a reservation past expiry and grace with its partial object; a ready file stays", () =>
      Effect.gen(function*() {
        const files = yield* Files.Files
        const { deployment, member } = yield* setup
        const partial = yield* reserveAs(member, deployment, "hello world")
        yield* files.upload(member, deployment, partial.file.key, Stream.make(encode("hello world")))
        const done = yield* reserveAs(member, deployment, "done")
        yield* files.upload(member, deployment, done.file.key, Stream.make(encode("done")))
        yield* files.complete(member, deployment, done.file.key)
        const untouched = yield* reserveAs(member, deployment, "never sent")

        // Past the upload expiry but within the grace: nothing is removed yet.
        yield* TestClock.adjust("29 minutes")
        yield* files.sweep()
        expect(Option.isSome(yield* recordOf(deployment, partial.file.key))).toBe(true)

        yield* TestClock.adjust("2 minutes")
        expect(yield* files.sweep()).toBeGreaterThanOrEqual(2)
        expect(Option.isNone(yield* recordOf(deployment, partial.file.key))).toBe(true)
        expect(Option.isNone(yield* objectOf(partial.file))).toBe(true)
        expect(Option.isNone(yield* recordOf(deployment, untouched.file.key))).toBe(true)
        // The ready file, reserved at the same moment, keeps its record and its bytes.
        expect(Option.getOrThrow(yield* recordOf(deployment, done.file.key)).status).toBe("ready")
        expect(Option.getOrThrow(yield* objectOf(done.file)).size).toBe(4)
        expect((yield* files.list(member, deployment)).map((f) => f.key)).toEqual([done.file.key])
        const download = yield* files.download(member, deployment, done.file.key)
        expect(download.file.key).toBe(done.file.key)
        // Sweeping again finds nothing of this deployment.
        yield* files.sweep()
        expect((yield* files.list(member, deployment)).map((f) => f.key)).toEqual([done.file.key])
      }))

    it.effect("an upload after expires_at is refused with upload_expired and stores nothing", () =>
      Effect.gen(function*() {
        const files = yield* Files.Files
        const { deployment, member } = yield* setup
        const reserved = yield* reserveAs(member, deployment, "late")
        yield* TestClock.adjust("15 minutes")
        const error = yield* Effect.flip(files.upload(member, deployment, reserved.file.key, Stream.make(encode("late"))))
        expect(error._tag).toBe("UploadExpired")
        expect(error.message).toContain(reserved.file.key)
        expect(Option.isNone(yield* objectOf(reserved.file))).toBe(true)
        // Still listed as pending until the grace ends, then gone even before any sweep.
        expect((yield* files.list(member, deployment)).map((f) => [f.key, f.status])).toEqual([[reserved.file.key, "pending"]])
        yield* TestClock.adjust("15 minutes")
        expect((yield* files.list(member, deployment)).length).toBe(1)
        yield* TestClock.adjust("1 millis")
        expect(yield* files.list(member, deployment)).toEqual([])
      }))

    it.effect("an upload made in time can be completed during the grace, not after it", () =>
      Effect.gen(function*() {
        const files = yield* Files.Files
        const { deployment, member } = yield* setup
        const inGrace = yield* reserveAs(member, deployment, "in grace")
        const tooLate = yield* reserveAs(member, deployment, "too late")
        yield* TestClock.adjust("14 minutes")
        yield* files.upload(member, deployment, inGrace.file.key, Stream.make(encode("in grace")))
        yield* files.upload(member, deployment, tooLate.file.key, Stream.make(encode("too late")))
        yield* TestClock.adjust("15 minutes")
        expect((yield* files.complete(member, deployment, inGrace.file.key)).status).toBe("ready")
        yield* TestClock.adjust("2 minutes")
        const error = yield* Effect.flip(files.complete(member, deployment, tooLate.file.key))
        expect(error._tag).toBe("UploadExpired")
        // The completed one is ready for good: the sweep leaves it alone.
        yield* files.sweep()
        expect(Option.getOrThrow(yield* recordOf(deployment, inGrace.file.key)).status).toBe("ready")
        expect(Option.isNone(yield* recordOf(deployment, tooLate.file.key))).toBe(true)
        expect(Option.isNone(yield* objectOf(tooLate.file))).toBe(true)
      }))

    it.effect("an upload still running when the sweep removes its reservation leaves no object behind", () =>
      Effect.gen(function*() {
        const files = yield* Files.Files
        const { deployment, member } = yield* setup
        const reserved = yield* reserveAs(member, deployment, "slow upload")
        const halfway = yield* Deferred.make<void>()
        const resume = yield* Deferred.make<void>()
        const body = Stream.concat(
          Stream.make(encode("slow ")),
          Stream.fromEffect(Effect.zipRight(Deferred.succeed(halfway, undefined), Deferred.await(resume))).pipe(
            Stream.map(() => encode("upload"))
          )
        )
        yield* TestClock.adjust("14 minutes")
        const upload = yield* files.upload(member, deployment, reserved.file.key, body).pipe(Effect.fork)
        yield* Deferred.await(halfway)
        yield* TestClock.adjust("17 minutes")
        yield* files.sweep()
        expect(Option.isNone(yield* recordOf(deployment, reserved.file.key))).toBe(true)
        yield* Deferred.succeed(resume, undefined)
        const error = yield* Effect.flip(Fiber.join(upload))
        expect(error._tag).toBe("UploadExpired")
        expect(Option.isNone(yield* objectOf(reserved.file))).toBe(true)
      }))

    it.effect("expirySweep sweeps at start and then every sweep interval (5 minutes by default)", () =>
      Effect.gen(function*() {
        const { deployment, member } = yield* setup
        const first = yield* reserveAs(member, deployment, "first")
        yield* TestClock.adjust("31 minutes")
        const second = yield* reserveAs(member, deployment, "second")
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(Files.expirySweep)
          // At start: the first reservation is past its grace.
          yield* TestClock.adjust("1 millis")
          expect(Option.isNone(yield* recordOf(deployment, first.file.key))).toBe(true)
          // The sweeps up to 30 minutes after the second reservation leave it (the last one exactly at its end)...
          yield* TestClock.adjust("34 minutes")
          expect(Option.isSome(yield* recordOf(deployment, second.file.key))).toBe(true)
          // ...the next one, 5 minutes on, removes it.
          yield* TestClock.adjust("1 minute")
          expect(Option.isNone(yield* recordOf(deployment, second.file.key))).toBe(true)
        }))
      }))
  })
})
