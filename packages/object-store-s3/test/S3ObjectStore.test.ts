import { describe, expect, it, layer } from "@effect/vitest"
import { ObjectStore } from "@hosting/core"
import { S3ObjectStore } from "@hosting/object-store-s3"
import { ObjectStoreSuite } from "@hosting/testing"
import { Config, ConfigProvider, Effect, Layer, Option, Redacted, Stream } from "effect"
import { createServer } from "node:net"
import * as S3Suite from "./S3Suite.js"
import { s3rver } from "./S3Servers.js"

ObjectStoreSuite.run("s3 (s3rver)", s3rver)
S3Suite.run("s3rver", s3rver)

/** A loopback port that nothing listens on: bound, then released. */
const closedPort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("S3ObjectStore", () => {
  it.live("an unreachable endpoint is ObjectStoreError Unavailable with a safe message", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const store = yield* S3ObjectStore.make({
        bucket: "unreachable",
        endpoint: `http://127.0.0.1:${port}`,
        credentials: { accessKeyId: "key", secretAccessKey: Redacted.make("secret") }
      })
      const headError = yield* Effect.flip(store.head("k"))
      expect(headError.reason).toBe("Unavailable")
      expect(headError.message).not.toContain("127.0.0.1")
      const putError = yield* Effect.flip(store.put("k", Stream.make(new Uint8Array([1])), { contentType: "text/plain", maxBytes: 10 }))
      expect(putError._tag).toBe("ObjectStoreError")
      expect(putError._tag === "ObjectStoreError" && putError.reason).toBe("Unavailable")
    }).pipe(Effect.scoped), { timeout: 20_000 })

  it.live("layerConfig reads its settings from Config and fails at start when the store cannot be reached", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const configured = S3ObjectStore.layerConfig({
        bucket: Config.string("S3_BUCKET"),
        endpoint: Config.string("S3_ENDPOINT"),
        credentials: { accessKeyId: Config.string("S3_ACCESS_KEY_ID"), secretAccessKey: Config.redacted("S3_SECRET_ACCESS_KEY") },
        createBucket: Config.succeed(true),
        maxAttempts: Config.succeed(1)
      })
      const provider = ConfigProvider.fromMap(
        new Map([
          ["S3_BUCKET", "unreachable"],
          ["S3_ENDPOINT", `http://127.0.0.1:${port}`],
          ["S3_ACCESS_KEY_ID", "key"],
          ["S3_SECRET_ACCESS_KEY", "secret"]
        ])
      )
      const error = yield* Effect.flip(Layer.build(configured).pipe(Effect.scoped, Effect.withConfigProvider(provider)))
      expect(error._tag).toBe("ObjectStoreError")
      expect(error._tag === "ObjectStoreError" && error.reason).toBe("Unavailable")
      const missing = yield* Effect.flip(Layer.build(configured).pipe(Effect.scoped, Effect.withConfigProvider(ConfigProvider.fromMap(new Map()))))
      expect(missing._tag).not.toBe("ObjectStoreError")
    }), { timeout: 20_000 })

  layer(s3rver, { excludeTestServices: true })((it) => {
    it.effect("a 96 MiB upload holds a bounded number of bytes in memory, not the object", () =>
      Effect.gen(function*() {
        const gc = (globalThis as { gc?: () => void }).gc
        // The root vitest config runs workers with --expose-gc; without a forced GC the numbers mean nothing.
        if (gc === undefined) return
        const store = yield* ObjectStore.ObjectStore
        gc()
        const baseline = process.memoryUsage().arrayBuffers
        let peak = 0
        const chunk = 64 * 1024
        const body = Stream.range(0, (96 * 1024 * 1024) / chunk - 1, 1).pipe(
          Stream.map(() => new Uint8Array(chunk)),
          Stream.zipWithIndex,
          Stream.tap(([, i]) =>
            Effect.sync(() => {
              if (i % 32 !== 0) return
              gc()
              peak = Math.max(peak, process.memoryUsage().arrayBuffers - baseline)
            })
          ),
          Stream.map(([bytes]) => bytes)
        )
        const info = yield* store.put(`tests/memory-${Date.now()}`, body, { contentType: "application/octet-stream", maxBytes: 128 * 1024 * 1024 })
        expect(info.size).toBe(96 * 1024 * 1024)
        // A few 5 MiB parts at most (pending, concatenated, in flight; s3rver runs in this process too), never the object.
        expect(peak).toBeLessThan(40 * 1024 * 1024)
      }), { timeout: 60_000 })

    it.effect("keys with slashes, spaces and unicode round-trip", () =>
      Effect.gen(function*() {
        const store = yield* ObjectStore.ObjectStore
        const k = `files/dep 1/ü/${Date.now()}.txt`
        yield* store.put(k, Stream.make(new TextEncoder().encode("ok")), { contentType: "text/plain", maxBytes: 10 })
        expect(Option.getOrThrow(yield* store.head(k)).size).toBe(2)
      }))
  })
})
