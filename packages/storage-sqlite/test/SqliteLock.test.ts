/**
 * A SQLite database serves one process: while one storage layer has the
 * file, another one refuses to start (at once, saying why), and once the
 * first is gone the file can be opened again.
 */
import { describe, expect, it } from "@effect/vitest"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Effect, Exit, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

describe("SQLite file ownership", () => {
  it.live("a second storage layer on a file in use refuses to start; the file opens again once the first is closed", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "hosting-sqlite-lock-"))
      const filename = join(dir, "hosting.db")
      const open = Effect.scoped(Effect.asVoid(Layer.build(SqliteStorage.layer({ filename }))))
      try {
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(SqliteStorage.layer({ filename }))
          const started = Date.now()
          const second = yield* Effect.exit(open)
          expect(Date.now() - started).toBeLessThan(2000)
          expect(Exit.isFailure(second)).toBe(true)
          if (Exit.isFailure(second)) {
            expect(String(second.cause)).toContain(
              `${filename} is in use by another process (a SQLite database serves one process; use Postgres for several)`
            )
          }
        }))
        expect(Exit.isSuccess(yield* Effect.exit(open))).toBe(true)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))

  it.live("databases in memory are not locked: each layer has its own", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* Layer.build(SqliteStorage.layer({ filename: ":memory:" }))
      yield* Layer.build(SqliteStorage.layer({ filename: ":memory:" }))
    })))
})
