/**
 * What the contract suite cannot check because only S3 stores do it:
 * presigned URLs honoured and refused by a real server, and streaming
 * multipart uploads. Run against every S3 server the tests have.
 */
import { HeadObjectCommand, ListMultipartUploadsCommand } from "@aws-sdk/client-s3"
import { describe, expect, layer } from "@effect/vitest"
import { ObjectStore } from "@hosting/core"
import { Chunk, Duration, Effect, type Layer, Option, Stream } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { S3Target } from "./S3Servers.js"

const text = (s: string) => new TextEncoder().encode(s)
const key = () => `tests/${randomUUID()}`
const read = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Stream.runCollect(stream).pipe(Effect.map((chunks) => Buffer.concat(Chunk.toReadonlyArray(chunks)).toString("utf8")))
const call = (url: string, init?: RequestInit) => Effect.promise(() => fetch(url, init))
const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const mebibyte = 1024 * 1024
const chunkSize = 64 * 1024
/** A deterministic stream of `chunks` 64 KiB chunks, made as it is pulled. */
const bigBody = (chunks: number) =>
  Stream.range(0, chunks - 1, 1).pipe(Stream.map((i) => new Uint8Array(chunkSize).fill(i % 251)))
const sha256Of = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Stream.runFold(stream, createHash("sha256"), (hash, chunk) => hash.update(chunk)).pipe(Effect.map((hash) => hash.digest("hex")))

/** A URL with one character of its signature changed. */
const tamperSignature = (url: string) => {
  const parsed = new URL(url)
  const signature = parsed.searchParams.get("X-Amz-Signature") ?? ""
  const last = signature.slice(-1)
  parsed.searchParams.set("X-Amz-Signature", signature.slice(0, -1) + (last === "0" ? "1" : "0"))
  return parsed.toString()
}

/** Runs the S3-only checks against a layer providing the store and its target. */
export const run = <E>(name: string, storeLayer: Layer.Layer<ObjectStore.ObjectStore | S3Target, E>) => {
  describe(`S3ObjectStore on ${name}`, () => {
    layer(storeLayer, { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("a presigned PUT stores what fetch sends with the signed content type", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          const url = Option.getOrThrow(
            yield* store.presignPut(k, { expiresIn: Duration.minutes(5), contentType: "text/plain", size: 5 })
          )
          expect(new URL(url).searchParams.get("X-Amz-SignedHeaders")?.split(";")).toContain("content-type")
          const response = yield* call(url, { method: "PUT", body: "hello", headers: { "content-type": "text/plain" } })
          expect(response.status).toBe(200)
          expect(Option.getOrThrow(yield* store.head(k)).size).toBe(5)
          expect(yield* read(Option.getOrThrow(yield* store.get(k)))).toBe("hello")
        }))

      it.effect("a presigned PUT with another content type, or another size, is refused and stores nothing", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          const url = Option.getOrThrow(
            yield* store.presignPut(k, { expiresIn: Duration.minutes(5), contentType: "text/plain", size: 5 })
          )
          const response = yield* call(url, { method: "PUT", body: "<b>hi", headers: { "content-type": "text/html" } })
          expect(response.status).toBe(403)
          expect(new URL(url).searchParams.get("X-Amz-SignedHeaders")?.split(";")).toContain("content-length")
          const longer = yield* call(url, { method: "PUT", body: "hello world", headers: { "content-type": "text/plain" } })
          expect(longer.status).toBe(403)
          expect(Option.isNone(yield* store.head(k))).toBe(true)
        }))

      it.effect("a presigned GET reads the object with the given content type and disposition", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          yield* store.put(k, Stream.make(text("report body")), { contentType: "application/octet-stream", maxBytes: 100 })
          const disposition = `attachment; filename="report.txt"`
          const url = Option.getOrThrow(
            yield* store.presignGet(k, { expiresIn: Duration.minutes(5), contentType: "text/plain", contentDisposition: disposition })
          )
          const response = yield* call(url)
          expect(response.status).toBe(200)
          expect(response.headers.get("content-disposition")).toBe(disposition)
          expect(response.headers.get("content-type")).toBe("text/plain")
          expect(yield* Effect.promise(() => response.text())).toBe("report body")
        }))

      it.effect("a tampered presigned URL is refused: a changed signature, or another key", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const mine = key()
          const other = key()
          yield* store.put(mine, Stream.make(text("mine")), { contentType: "text/plain", maxBytes: 100 })
          yield* store.put(other, Stream.make(text("other")), { contentType: "text/plain", maxBytes: 100 })
          const url = Option.getOrThrow(
            yield* store.presignGet(mine, { expiresIn: Duration.minutes(5), contentType: "text/plain", contentDisposition: "inline" })
          )
          const badSignature = yield* call(tamperSignature(url))
          expect(badSignature.status).toBe(403)
          const otherKey = yield* call(url.replace(mine.split("/")[1]!, other.split("/")[1]!))
          expect(otherKey.status).toBe(403)
          expect(yield* Effect.promise(() => otherKey.text())).not.toContain("other")

          const putUrl = Option.getOrThrow(
            yield* store.presignPut(mine, { expiresIn: Duration.minutes(5), contentType: "text/plain", size: 4 })
          )
          const badPut = yield* call(tamperSignature(putUrl), { method: "PUT", body: "evil", headers: { "content-type": "text/plain" } })
          expect(badPut.status).toBe(403)
          expect(yield* read(Option.getOrThrow(yield* store.get(mine)))).toBe("mine")
        }))

      it.effect("an expired presigned URL is refused", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const k = key()
          yield* store.put(k, Stream.make(text("soon gone")), { contentType: "text/plain", maxBytes: 100 })
          const getUrl = Option.getOrThrow(
            yield* store.presignGet(k, { expiresIn: Duration.seconds(1), contentType: "text/plain", contentDisposition: "inline" })
          )
          const putUrl = Option.getOrThrow(
            yield* store.presignPut(key(), { expiresIn: Duration.seconds(1), contentType: "text/plain", size: 4 })
          )
          yield* sleep(2_100)
          expect((yield* call(getUrl)).status).toBe(403)
          expect((yield* call(putUrl, { method: "PUT", body: "late", headers: { "content-type": "text/plain" } })).status).toBe(403)
        }), { timeout: 20_000 })

      it.effect("a 12 MiB upload streams through a multipart upload of three parts and reads back whole", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const target = yield* S3Target
          const k = key()
          const chunks = (12 * mebibyte) / chunkSize
          const info = yield* store.put(k, bigBody(chunks), { contentType: "application/octet-stream", maxBytes: 20 * mebibyte })
          expect(info.size).toBe(12 * mebibyte)
          if (target.realS3) {
            // A multipart object's ETag ends in "-<parts>"; a single PutObject's never does.
            const head = yield* Effect.promise(() => target.client.send(new HeadObjectCommand({ Bucket: target.config.bucket, Key: k })))
            expect(head.ETag?.replace(/"/g, "")).toMatch(/-3$/)
          } else {
            const path = `/${target.config.bucket}/${k}`
            const parts = (target.requests ?? []).filter((r) => r.startsWith(`PUT ${path}?`) && r.includes("partNumber="))
            expect(parts.map((r) => new URL(r.split(" ")[1]!, "http://x").searchParams.get("partNumber")).sort()).toEqual(["1", "2", "3"])
            expect((target.requests ?? []).some((r) => r === `PUT ${path}` || r.startsWith(`PUT ${path}?x-id=PutObject`))).toBe(false)
          }
          expect(yield* sha256Of(Option.getOrThrow(yield* store.get(k)))).toBe(yield* sha256Of(bigBody(chunks)))
          const range = yield* read(Option.getOrThrow(yield* store.get(k, { start: 6 * mebibyte, end: 6 * mebibyte + 2 })))
          expect(Buffer.from(range, "utf8")).toEqual(Buffer.from([96, 96, 96]))
        }), { timeout: 60_000 })

      it.effect("an oversize multipart upload fails with ObjectTooLarge and leaves no object (and no open upload)", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const target = yield* S3Target
          const k = key()
          yield* store.put(k, Stream.make(text("kept")), { contentType: "text/plain", maxBytes: 10 * mebibyte })
          const error = yield* Effect.flip(
            store.put(k, bigBody((12 * mebibyte) / chunkSize), { contentType: "application/octet-stream", maxBytes: 7 * mebibyte })
          )
          expect(error._tag).toBe("ObjectTooLarge")
          expect(yield* read(Option.getOrThrow(yield* store.get(k)))).toBe("kept")
          if (target.realS3) {
            const uploads = yield* Effect.promise(() =>
              target.client.send(new ListMultipartUploadsCommand({ Bucket: target.config.bucket, Prefix: k }))
            )
            expect(uploads.Uploads ?? []).toEqual([])
          }
        }), { timeout: 60_000 })

      it.effect("a failing stream after the first part aborts the upload and stores nothing", () =>
        Effect.gen(function*() {
          const store = yield* ObjectStore.ObjectStore
          const target = yield* S3Target
          const k = key()
          const body = Stream.concat(bigBody((6 * mebibyte) / chunkSize), Stream.fail("connection lost" as const))
          expect(yield* Effect.flip(store.put(k, body, { contentType: "application/octet-stream", maxBytes: 20 * mebibyte }))).toBe(
            "connection lost"
          )
          expect(Option.isNone(yield* store.head(k))).toBe(true)
          if (target.realS3) {
            const uploads = yield* Effect.promise(() =>
              target.client.send(new ListMultipartUploadsCommand({ Bucket: target.config.bucket, Prefix: k }))
            )
            expect(uploads.Uploads ?? []).toEqual([])
          }
        }), { timeout: 60_000 })
    })
  })
}
