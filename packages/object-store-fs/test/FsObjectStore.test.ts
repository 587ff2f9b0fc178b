import { describe, expect, it } from "@effect/vitest"
import { ObjectStore } from "@hosting/core"
import { FsObjectStore } from "@hosting/object-store-fs"
import { ObjectStoreSuite } from "@hosting/testing"
import { Effect, Option, Stream } from "effect"
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { temporaryStore } from "./TemporaryStore.js"


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

describe("FsObjectStore at start", () => {
  it.effect("sweeps the temporary files of writers that are gone and keeps those of running ones", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "hosting-objects-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const host = hostname()
      const dead = spawnSync(process.execPath, ["-e", ""]).pid
      const twoDaysAgo = (Date.now() - 2 * 24 * 60 * 60 * 1000) / 1000
      const plant = (name: string, old = false) => {
        const folder = join(dir, "tmp", name)
        mkdirSync(folder, { recursive: true })
        writeFileSync(join(folder, "part"), "half an upload")
        if (old) utimesSync(folder, twoDaysAgo, twoDaysAgo)
        return folder
      }
      const killed = plant(`${host}.${dead}.0a1b2c3d`)
      const earlierLife = plant(`${host}.${process.pid}.0a1b2c3d`)
      const running = plant(`${host}.${process.ppid}.0a1b2c3d`)
      const otherMachine = plant("elsewhere.7.0a1b2c3d")
      const otherMachineIdle = plant("elsewhere.8.0a1b2c3d", true)
      const loose = join(dir, "tmp", "3f2a")
      writeFileSync(loose, "an older version's temporary file")
      utimesSync(loose, twoDaysAgo, twoDaysAgo)

      const store = yield* FsObjectStore.make({ directory: dir })
      expect([killed, earlierLife, otherMachineIdle, loose].filter(existsSync)).toEqual([])
      expect([running, otherMachine].filter(existsSync)).toEqual([running, otherMachine])
      // The store writes in a folder of its own; a second store of the same process leaves it alone.
      yield* store.put("k", Stream.make(new Uint8Array([1, 2])), { contentType: "text/plain", maxBytes: 10 })
      const own = readdirSync(join(dir, "tmp")).filter((name) => name.startsWith(`${host}.${process.pid}.`))
      expect(own).toHaveLength(1)
      const second = yield* FsObjectStore.make({ directory: dir })
      expect(existsSync(join(dir, "tmp", own[0]!))).toBe(true)
      yield* store.put("k2", Stream.make(new Uint8Array([3])), { contentType: "text/plain", maxBytes: 10 })
      expect(Option.isSome(yield* second.head("k2"))).toBe(true)
    }).pipe(Effect.scoped))
})
