/**
 * An interrupted storage call never fails another one. The driver cancels an
 * interrupted statement with `pg_cancel_backend`, which signals the backend
 * process, not the statement: when the statement has just finished, the
 * signal lands on whatever that connection runs next, another request's
 * statement, which fails with 57014 (and answered 503). Storage calls run to
 * their end instead, and the interruption takes effect after.
 */
import { layer as withLayer } from "@effect/vitest"
import { Ids, Ports } from "@hosting/core"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Effect, Exit, Fiber, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

const rounds = 1000

// Without a server the suite shows as skipped, with the reason in its title.
describe.skipIf(database === undefined)(`interrupted storage calls on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})
if (database !== undefined) {
  // Two connections, so that a connection an interrupted call used is soon another call's.
  const storage = Layer.orDie(PostgresStorage.layer({ url: database.url, maxConnections: 2 }))
  describe("interrupted storage calls on PostgreSQL", () => {
    withLayer(storage, { excludeTestServices: true })((it) => {
      it.effect(`calls interrupted at random moments fail no other call (${rounds} rounds)`, () =>
        Effect.gen(function*() {
          const accounts = yield* Ports.AccountStore
          const read = accounts.findByName(Ids.AccountName.make("nobody"))
          const failures: Array<string> = []
          for (let round = 0; round < rounds; round++) {
            const interrupted = yield* Effect.fork(read)
            const others = yield* Effect.fork(Effect.all(
              Array.from({ length: 6 }, () => Effect.exit(read)),
              { concurrency: "unbounded" }
            ))
            // Interrupted anywhere from before its statement is sent to just after it finished.
            for (let i = round % 12; i > 0; i--) yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
            yield* Fiber.interrupt(interrupted)
            for (const exit of yield* Fiber.join(others)) {
              if (Exit.isFailure(exit)) failures.push(String(exit.cause))
            }
          }
          expect(failures).toEqual([])
        }), 60_000)
    })
  })
}
