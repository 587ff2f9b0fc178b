import { Effect, Exit } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { Transactor } from "../ports/Ports.js"
import * as Metrics from "../runtime/Metrics.js"
import * as Steps from "../runtime/Steps.js"
import { Outcome } from "./outcome.js"

/** One effect of a group, and where its outcome goes: a member that waits learns it through `done`; the leader reads `exit`. */
interface Member {
  readonly effect: Effect.Effect<unknown, unknown>
  /** One statement, atomic without a transaction of its own (`RunOptions.oneStatement`). */
  readonly oneStatement: boolean
  readonly done: Outcome<unknown, unknown> | undefined
  exit: Exit.Exit<unknown, unknown> | undefined
}

/** A group that ran into a failure: its transaction is rolled back and every member runs alone. */
const groupFailed = Symbol("groupFailed")

type Immediate = { setImmediate?: (f: () => void) => unknown }

/**
 * Resumes once the event loop has handled the I/O already due (the requests
 * that arrived together): `setImmediate` where the platform has it (Node,
 * Bun), else a timer.
 */
const afterDueIo: Effect.Effect<void> = Effect.async<void>((resume) => {
  const done = () => resume(Effect.void)
  const immediate = (globalThis as Immediate).setImmediate
  if (typeof immediate === "function") immediate(done)
  else setTimeout(done, 0)
})

/** How a member of a group runs. */
export interface RunOptions {
  /**
   * The effect is one storage statement, which the database applies whole
   * on its own: when it runs alone (a group of one, or again after its
   * group failed) it runs without a transaction, which saves the round
   * trips of `BEGIN` and `COMMIT` (two of a reply's end's three on
   * Postgres). In a group it shares the group's transaction as any member.
   */
  readonly oneStatement?: boolean | undefined
}

export interface GroupCommit {
  /**
   * Runs `effect` in a storage transaction shared with the effects submitted
   * around the same time. It commits when all of them succeed; otherwise
   * the group is rolled back and each member runs again in a transaction of
   * its own (a `oneStatement` member, on its own), so a member's failure
   * never touches another's writes. A member may therefore run twice: it
   * must not have effects outside storage.
   */
  readonly run: <A, E>(effect: Effect.Effect<A, E>, options?: RunOptions) => Effect.Effect<A, E | StorageError>
}

/**
 * Group commit: writes submitted while the process is busy share one
 * transaction, and so one commit, instead of paying for theirs one by one.
 * A group gathers until the I/O already due on the event loop is handled
 * (the requests that arrived together), at most `maxSize` members. The
 * fiber that started the group (its leader) then runs the transaction for
 * all of them, uninterruptibly: a group that started gathering commits, and
 * its members learn how. The others wait for it (and may stop waiting; what
 * they submitted commits all the same). No fiber is forked for a group: a
 * fork and the leader's own wait cost more than a lone write's commit
 * (docs/performance.md, "Transactions").
 */
export const make = (tx: Transactor["Type"], options: { readonly maxSize: number }): GroupCommit => {
  let gathering: Array<Member> | undefined

  const settle = (member: Member, exit: Exit.Exit<unknown, unknown>) =>
    Effect.sync(() => {
      if (member.done === undefined) member.exit = exit
      else member.done.done(exit)
    })

  /** A member's effect committed on its own: one statement as it is, anything else in a transaction of its own. */
  const byItself = (member: Member) => member.oneStatement ? member.effect : tx.withTransaction(member.effect)

  const alone = (member: Member) => Effect.flatMap(Effect.exit(byItself(member)), (exit) => settle(member, exit))

  const together = (group: ReadonlyArray<Member>) =>
    tx.withTransaction(
      Effect.flatMap(Effect.forEach(group, (member) => Effect.exit(member.effect)), (exits) =>
        exits.every(Exit.isSuccess) ? Effect.succeed(exits) : Effect.fail(groupFailed))
    ).pipe(
      Effect.matchCauseEffect({
        onSuccess: (exits) => Effect.forEach(group, (member, i) => settle(member, exits[i]!), { discard: true }),
        onFailure: () => Effect.forEach(group, alone, { discard: true })
      })
    )

  /**
   * The leader's part: gathers, commits the group, and answers the leader's
   * own outcome; where nothing interrupts it (a region only where the fiber
   * is interruptible: Steps).
   */
  const lead = (status: Steps.Status, leader: Member, group: Array<Member>) =>
    Steps.uninterruptibleFor(status, Effect.zipRight(
      afterDueIo,
      Effect.suspend(() => {
        if (gathering === group) gathering = undefined
        Metrics.observe(Metrics.groupCommitBatch, group.length)
        // Alone, the leader's outcome is its effect's: no one else waits to learn it.
        if (group.length === 1) return byItself(leader)
        return Effect.flatMap(together(group), () => leader.exit!)
      })
    ))

  return {
    run: <A, E>(effect: Effect.Effect<A, E>, runOptions?: RunOptions) =>
      Effect.withFiberRuntime<unknown, unknown>((_, status) => {
        const oneStatement = runOptions?.oneStatement === true
        if (gathering !== undefined && gathering.length < options.maxSize) {
          // Joined in this very step: the group cannot start committing between the look and the join.
          const done = new Outcome<unknown, unknown>()
          gathering.push({ effect, oneStatement, done, exit: undefined })
          return done.await
        }
        const leader: Member = { effect, oneStatement, done: undefined, exit: undefined }
        const group = [leader]
        gathering = group
        return lead(status, leader, group)
      }) as Effect.Effect<A, E | StorageError>
  }
}
