/**
 * Our SQLite client (internal/client.ts): statements outside a transaction
 * never run inside another fiber's open transaction, transactions take
 * turns, nest as savepoints and roll back what fails or is interrupted, the
 * statement cache stays bounded, rows read as the driver gives them, and
 * failures are SqlErrors. With a tracer and without one: without, statements
 * and transactions take the client's direct paths.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, FiberId, Stream } from "effect"
import * as Client from "../src/internal/client.js"

for (const traced of [true, false]) {
  const withClient = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>, statementCacheSize?: number) =>
    Effect.provide(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)`
        return yield* effect
      }),
      Client.layer({ filename: ":memory:", statementCacheSize })
    ).pipe(Effect.withTracerEnabled(traced))

  const texts = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ text: string }>`SELECT text FROM notes ORDER BY id`).pipe(
    Effect.map((rows) => rows.map((row) => row.text))
  )

  describe(`SQLite client, ${traced ? "with" : "without"} a tracer`, () => {
    it.effect("a write outside a transaction waits for another fiber's open transaction, and survives its rollback", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const begun = yield* Deferred.make<void>()
        const finish = yield* Deferred.make<void>()
        const failed = new Error("rolled back on purpose")
        const transaction = yield* Effect.fork(
          sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO notes (text) VALUES ('inside')`
            yield* Deferred.succeed(begun, undefined)
            yield* Deferred.await(finish)
            return yield* Effect.die(failed)
          }))
        )
        yield* Deferred.await(begun)
        const outside = yield* Effect.fork(sql`INSERT INTO notes (text) VALUES ('outside')`)
        // The outside write is held back while the transaction is open.
        yield* Effect.yieldNow()
        expect(outside.unsafePoll()).toBeNull()
        yield* Deferred.succeed(finish, undefined)
        expect(Exit.isFailure(yield* Fiber.await(transaction))).toBe(true)
        yield* Fiber.join(outside)
        expect(yield* texts).toEqual(["outside"])
      })))

    it.live("statements interrupted while they wait for a transaction leave no permit behind: later statements still run", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        // Waiters that yield every few steps (below 10, Effect's run loop stops making progress at all),
        // interrupted a few steps after the transaction ends: interruptions land all over their wake-up.
        for (let budget = 10; budget <= 40; budget++) {
          for (let step = 0; step < 4; step++) {
            const release = yield* Deferred.make<void>()
            const open = yield* Deferred.make<void>()
            const transaction = yield* Effect.fork(sql.withTransaction(
              Effect.zipRight(Deferred.succeed(open, undefined), Deferred.await(release))
            ))
            yield* Deferred.await(open)
            const waiters = yield* Effect.forEach(
              Array.from({ length: 4 }, (_, i) => i),
              (i) => Effect.fork(Effect.withMaxOpsBeforeYield(sql`INSERT INTO notes (text) VALUES (${`${budget}-${step}-${i}`})`, budget))
            )
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(transaction)
            for (let i = 0; i < step; i++) yield* Effect.yieldNow()
            yield* Fiber.interruptAll(waiters)
            const alive = yield* sql<{ n: number }>`SELECT count(*) AS n FROM notes`.pipe(Effect.timeout("1 second"), Effect.option)
            expect(alive._tag, `budget ${budget}, step ${step}: a statement after the interruptions never ran`).toBe("Some")
          }
        }
      })))

    it.effect("transactions take turns: the second begins only after the first has committed", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const order: Array<string> = []
        const transaction = (name: string) =>
          sql.withTransaction(Effect.gen(function*() {
            order.push(`${name} begins`)
            yield* sql`INSERT INTO notes (text) VALUES (${name})`
            // Other fibers get to run meanwhile.
            yield* Effect.repeatN(Effect.yieldNow(), 5)
            order.push(`${name} ends`)
          }))
        yield* Effect.all([transaction("a"), transaction("b")], { concurrency: "unbounded" })
        expect(order).toEqual(["a begins", "a ends", "b begins", "b ends"])
        expect(yield* texts).toEqual(["a", "b"])
      })))

    it.effect("more distinct statements than the cache holds still run, each answering its own rows", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO notes (text) VALUES ('one'), ('two'), ('three')`
        for (let round = 0; round < 3; round++) {
          expect(yield* sql<{ n: number }>`SELECT count(*) AS n FROM notes`).toEqual([{ n: 3 }])
          expect(yield* sql<{ text: string }>`SELECT text FROM notes WHERE id = 1`).toEqual([{ text: "one" }])
          expect(yield* sql<{ text: string }>`SELECT text FROM notes WHERE id = ${2}`).toEqual([{ text: "two" }])
        }
      }), 2))

    it.effect("values, raw, unprepared and stream forms answer what better-sqlite3 gives", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const written = (yield* sql`INSERT INTO notes (text) VALUES ('a'), ('b')`.raw) as { changes: number }
        expect(written.changes).toBe(2)
        expect(yield* sql`SELECT id, text FROM notes ORDER BY id`.values).toEqual([[1, "a"], [2, "b"]])
        expect(yield* sql<{ text: string }>`SELECT text FROM notes WHERE id = ${2}`.unprepared).toEqual([{ text: "b" }])
        expect(Chunk.toReadonlyArray(yield* Stream.runCollect(sql<{ text: string }>`SELECT text FROM notes ORDER BY id`.stream)))
          .toEqual([{ text: "a" }, { text: "b" }])
        // A reader after the values form answers objects again.
        expect(yield* sql<{ text: string }>`SELECT id, text FROM notes ORDER BY id`).toEqual([{ id: 1, text: "a" }, { id: 2, text: "b" }])
      })))

    it.effect("a statement that cannot be prepared or executed fails with an SqlError and changes nothing", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const unknown = yield* Effect.flip(sql`SELECT nothing FROM nowhere`)
        expect(unknown._tag).toBe("SqlError")
        expect((unknown as SqlError.SqlError).message).toBe("Failed to prepare statement")
        yield* sql`INSERT INTO notes (text) VALUES ('once')`
        const repeated = yield* Effect.flip(sql`INSERT INTO notes (text) VALUES ('once')`)
        expect((repeated as SqlError.SqlError).message).toBe("Failed to execute statement")
        expect(String((repeated as SqlError.SqlError).cause)).toMatch(/UNIQUE/)
        expect(yield* texts).toEqual(["once"])
      })))

    it.effect("a transaction commits what succeeds and rolls back what fails; one inside another is a savepoint of it", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const insert = (text: string) => sql`INSERT INTO notes (text) VALUES (${text})`
        yield* sql.withTransaction(insert("committed"))
        const failed = yield* Effect.flip(sql.withTransaction(Effect.zipRight(insert("rolled back"), Effect.fail("no"))))
        expect(failed).toBe("no")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* insert("outer")
          // The inner transaction's failure rolls back to its savepoint; the outer goes on and commits.
          expect(yield* Effect.flip(sql.withTransaction(Effect.zipRight(insert("inner, rolled back"), Effect.fail("inner"))))).toBe("inner")
          yield* sql.withTransaction(insert("inner, kept"))
        }))
        // A statement that fails inside a transaction fails it, and nothing of it stays.
        const duplicate = yield* Effect.flip(sql.withTransaction(Effect.zipRight(insert("lost"), insert("outer"))))
        expect(duplicate._tag).toBe("SqlError")
        expect(yield* texts).toEqual(["committed", "outer", "inner, kept"])
      })))

    it.live("an interrupted transaction rolls back and gives its turn to the next", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const inside = yield* Deferred.make<void>()
        const transaction = yield* Effect.fork(sql.withTransaction(
          Effect.zipRight(sql`INSERT INTO notes (text) VALUES ('interrupted')`, Effect.zipRight(Deferred.succeed(inside, undefined), Effect.never))
        ))
        yield* Deferred.await(inside)
        yield* Fiber.interrupt(transaction)
        yield* sql.withTransaction(sql`INSERT INTO notes (text) VALUES ('next')`).pipe(Effect.timeout("1 second"))
        expect(yield* texts).toEqual(["next"])
      })))

    it.effect("a row whose columns repeat a name keeps the last, as the driver's objects do", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO notes (text) VALUES ('a')`
        expect(yield* sql`SELECT id AS x, text AS x FROM notes`).toEqual([{ x: "a" }])
        expect(yield* sql`SELECT id, text FROM notes WHERE id = ${99}`).toEqual([])
      })))

    it.effect("any column name makes the row the driver makes: quotes, a backslash, digits; __proto__ set as the driver sets it", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO notes (text) VALUES ('a')`
        const [row] = yield* sql.unsafe<Record<string, unknown>>(
          `SELECT text AS "say ""hi""", text AS 'back\\slash', id AS "0", id AS "__proto__", text AS "}; throw 1; ({" FROM notes`
        )
        expect(Object.getPrototypeOf(row)).toBe(Object.prototype)
        expect(Object.entries(row!)).toEqual([
          ["0", 1],
          ["say \"hi\"", "a"],
          ["back\\slash", "a"],
          ["}; throw 1; ({", "a"]
        ])
        const [plain] = yield* sql.unsafe<Record<string, unknown>>(`SELECT text AS "say ""hi""", id AS "0" FROM notes`)
        expect(plain).toEqual({ "0": 1, "say \"hi\"": "a" })
      })))

    it.effect("where functions cannot be made from text, rows are made by a loop, the same", () =>
      withClient(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO notes (text) VALUES ('a')`
        // As under `node --disallow-code-generation-from-strings`: `new Function` throws.
        const original = globalThis.Function
        globalThis.Function = function() {
          throw new EvalError("Code generation from strings disallowed for this context")
        } as unknown as FunctionConstructor
        const rows = yield* Effect.ensuring(
          sql`SELECT id AS x, text AS x, text AS "quoted ""name""" FROM notes`,
          Effect.sync(() => (globalThis.Function = original))
        )
        expect(rows).toEqual([{ x: "a", "quoted \"name\"": "a" }])
      })))
  })
}

describe("the connection's turn (makeTurn)", () => {
  /** Forks a fiber that takes the turn, notes its name, and keeps the turn until `release` runs. */
  const taker = (turn: ReturnType<typeof Client.makeTurn>, got: Array<string>, name: string) =>
    Effect.fork(Effect.zipRight(turn.take, Effect.sync(() => got.push(name))))

  it.effect("is held by one at a time and handed to those waiting in the order they came", () =>
    Effect.gen(function*() {
      const turn = Client.makeTurn()
      const got: Array<string> = []
      yield* turn.take
      const waiting = [yield* taker(turn, got, "b"), yield* taker(turn, got, "c")]
      yield* Effect.yieldNow()
      expect(got).toEqual([])
      yield* turn.release
      yield* Fiber.join(waiting[0]!)
      expect(got).toEqual(["b"])
      yield* turn.release
      yield* Fiber.join(waiting[1]!)
      expect(got).toEqual(["b", "c"])
      yield* turn.release
      // Free again: taken at once.
      yield* turn.take
    }))

  /** The turn taken, and two fibers, b then c, waiting in line for it. */
  const twoWaiting = Effect.gen(function*() {
    const turn = Client.makeTurn()
    const got: Array<string> = []
    yield* turn.take
    const b = yield* taker(turn, got, "b")
    const c = yield* taker(turn, got, "c")
    yield* Effect.yieldNow()
    return { turn, got, b, c }
  })

  it.effect("a waiter interrupted leaves the line: the turn goes to the next", () =>
    Effect.gen(function*() {
      const { b, c, got, turn } = yield* twoWaiting
      expect(Exit.isInterrupted(yield* Fiber.interrupt(b))).toBe(true)
      yield* turn.release
      yield* Fiber.join(c)
      expect(got).toEqual(["c"])
    }))

  it.effect("a turn handed to a waiter as it is interrupted is passed on, not lost", () =>
    Effect.gen(function*() {
      const { b, c, got, turn } = yield* twoWaiting
      // In one step: b's interruption reaches it first, then the release hands it the turn.
      yield* Effect.sync(() => {
        b.unsafeInterruptAsFork(FiberId.none)
        Effect.runSync(turn.release)
      })
      expect(Exit.isInterrupted(yield* Fiber.await(b))).toBe(true)
      yield* Fiber.join(c)
      expect(got).toEqual(["c"])
    }))
})
