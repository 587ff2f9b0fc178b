import { describe, expect, it } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { Cause, Effect, Exit, Fiber, Scope } from "effect"
import * as GroupCommit from "../src/internal/groupCommit.js"

/**
 * A store of named values with transactions that count themselves: a
 * transaction works on a copy and puts it in place only when its effect
 * succeeds.
 */
const store = () => {
  let committed = new Map<string, number>()
  let current: Map<string, number> | undefined
  const counts = { transactions: 0 }
  const tx = Ports.Transactor.of({
    withTransaction: (effect) =>
      Effect.suspend(() => {
        counts.transactions++
        current = new Map(committed)
        return effect.pipe(
          Effect.tap(() => Effect.sync(() => (committed = current!))),
          Effect.ensuring(Effect.sync(() => (current = undefined)))
        )
      })
  })
  const write = (key: string, value: number) => Effect.sync(() => void (current ?? committed).set(key, value))
  return { tx, counts, write, read: () => Object.fromEntries(committed) }
}

const withGroups = <A, E>(maxSize: number, f: (s: ReturnType<typeof store>, group: GroupCommit.GroupCommit) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const s = store()
    const scope = yield* Scope.make()
    const result = yield* f(s, GroupCommit.make(s.tx, { maxSize }))
    yield* Scope.close(scope, Exit.void)
    return result
  })

describe("group commit (sends and reply ends arriving together share a transaction)", () => {
  it.live("writes submitted together commit in one transaction, and each gets its own answer", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        const answers = yield* Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          (i) => group.run(Effect.as(s.write(`k${i}`, i), i * 10)),
          { concurrency: "unbounded" }
        )
        expect(answers).toEqual(Array.from({ length: 10 }, (_, i) => i * 10))
        expect(s.counts.transactions).toBe(1)
        expect(Object.keys(s.read()).length).toBe(10)
      })))

  it.live("a member that fails is rolled back alone: the others of its group still commit", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        const failing = Effect.zipRight(s.write("bad", 1), Effect.fail("refused" as const))
        const exits = yield* Effect.forEach(
          [s.write("a", 1), failing, s.write("b", 2)],
          (effect) => Effect.exit(group.run(effect)),
          { concurrency: "unbounded" }
        )
        expect(exits.map(Exit.isSuccess)).toEqual([true, false, true])
        expect(exits[1]).toStrictEqual(Exit.fail("refused"))
        expect(s.read()).toEqual({ a: 1, b: 2 })
        // The group's transaction, rolled back, then one per member.
        expect(s.counts.transactions).toBe(4)
      })))

  it.live("a member that dies fails alone too, with its defect", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        const exits = yield* Effect.forEach(
          [s.write("a", 1), Effect.dieMessage("bug")],
          (effect) => Effect.exit(group.run(effect)),
          { concurrency: "unbounded" }
        )
        expect(Exit.isSuccess(exits[0]!)).toBe(true)
        const died = exits[1]!
        expect(Exit.isFailure(died) && Cause.isDie(died.cause)).toBe(true)
        expect(s.read()).toEqual({ a: 1 })
      })))

  it.live("a group holds at most maxSize members; the rest start the next group", () =>
    withGroups(2, (s, group) =>
      Effect.gen(function*() {
        yield* Effect.forEach(["a", "b", "c", "d", "e"], (key) => group.run(s.write(key, 1)), { concurrency: "unbounded" })
        expect(s.counts.transactions).toBe(3)
        expect(Object.keys(s.read()).sort()).toEqual(["a", "b", "c", "d", "e"])
      })))

  it.live("a submitter that stops waiting does not stop its write: the group commits it", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        const waiting = yield* Effect.fork(group.run(s.write("kept", 1)))
        // The submitter runs up to its wait, then is stopped.
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(waiting)
        yield* group.run(s.write("after", 2))
        expect(s.read()).toEqual({ kept: 1, after: 2 })
      })))

  it.live("a one-statement write that runs alone runs without a transaction (no BEGIN and COMMIT around it)", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        yield* group.run(s.write("alone", 1), { oneStatement: true })
        expect(s.counts.transactions).toBe(0)
        // Any other write alone still gets its transaction.
        yield* group.run(s.write("other", 2))
        expect(s.counts.transactions).toBe(1)
        expect(s.read()).toEqual({ alone: 1, other: 2 })
      })))

  it.live("one-statement writes submitted together share the group's transaction; after a failed group they run alone, without one", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        yield* Effect.forEach(["a", "b", "c"], (key) => group.run(s.write(key, 1), { oneStatement: true }), { concurrency: "unbounded" })
        expect(s.counts.transactions).toBe(1)
        const failing = Effect.zipRight(s.write("bad", 1), Effect.fail("refused" as const))
        const exits = yield* Effect.forEach(
          [group.run(s.write("d", 2), { oneStatement: true }), group.run(failing), group.run(s.write("e", 3))],
          Effect.exit,
          { concurrency: "unbounded" }
        )
        expect(exits.map(Exit.isSuccess)).toEqual([true, false, true])
        expect(s.read()).toEqual({ a: 1, b: 1, c: 1, d: 2, e: 3 })
        // The first group's; the failed group's, rolled back; then one each for the two members that are not one statement.
        expect(s.counts.transactions).toBe(4)
      })))

  it.live("writes submitted after a group committed form a new group", () =>
    withGroups(64, (s, group) =>
      Effect.gen(function*() {
        yield* group.run(s.write("first", 1))
        yield* group.run(s.write("second", 2))
        expect(s.counts.transactions).toBe(2)
        expect(s.read()).toEqual({ first: 1, second: 2 })
      })))
})
