import { describe, expect, it } from "@effect/vitest"
import { ObjectStore } from "@hosting/core"
import { FsObjectStore } from "@hosting/object-store-fs"
import { ObjectStoreSuite } from "@hosting/testing"
import { Effect, Layer, Option, Stream } from "effect"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A store in a fresh temporary directory, removed when the layer is released. */
const temporaryStore = (onDirectory: (dir: string) => void = () => {}) =>
  Layer.unwrapScoped(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "hosting-objects-"))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ).pipe(Effect.map((dir) => {
      onDirectory(dir)
      return FsObjectStore.layer({ directory: dir })
    }))
  )

ObjectStoreSuite.run("file system", temporaryStore())

let directory = ""
const files = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]))

describe("FsObjectStore", () => {
  it.layer(temporaryStore((dir) => (directory = dir)))((it) => {
    it.effect("paths are hashes of the key: a key with dots and slashes never leaves the directory", () =>
      Effect.gen(function*() {
        const store = yield* ObjectStore.ObjectStore
        yield* store.put("../../etc/evil", Stream.make(new Uint8Array([1])), { contentType: "text/plain", maxBytes: 10 })
        const written = files(directory)
        expect(written.every((path) => path.startsWith(directory))).toBe(true)
        expect(written.some((path) => path.includes("evil"))).toBe(false)
        expect(written.some((path) => /[0-9a-f]{64}$/.test(path))).toBe(true)
      }))

    it.effect("a failed write leaves no temporary file behind", () =>
      Effect.gen(function*() {
        const store = yield* ObjectStore.ObjectStore
        const before = files(join(directory, "tmp")).length
        yield* Effect.flip(store.put("k", Stream.make(new Uint8Array(20)), { contentType: "text/plain", maxBytes: 10 }))
        expect(files(join(directory, "tmp")).length).toBe(before)
        expect(Option.isNone(yield* store.head("k"))).toBe(true)
      }))
  })
})
