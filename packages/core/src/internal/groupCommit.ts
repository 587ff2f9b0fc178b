import { Deferred, Effect, Exit, type Scope } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { Transactor } from "../ports/Ports.js"
import * as Metrics from "../runtime/Metrics.js"

/** One effect waiting for its group's transaction, and where its outcome goes. */
interface Member {
  readonly effect: Effect.Effect<unknown, unknown>
  readonly done: Deferred.Deferred<unknown, unknown>
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

export interface GroupCommit {
  /**
   * Runs `effect` in a storage transaction shared with the effects submitted
   * around the same time. It commits when all of them succeed; otherwise
   * the group is rolled back and each member runs again in a transaction of
   * its own, so a member's failure never touches another's writes. A member
   * may therefore run twice: it must not have effects outside storage.
   */
  readonly run: <A, E>(effect: Effect.Effect<A, E>) => Effect.Effect<A, E | StorageError>
}

/**
 * Group commit: writes submitted while the process is busy share one
 * transaction, and so one commit, instead of paying for theirs one by one.
 * A group gathers until the I/O already due on the event loop is handled
 * (the requests that arrived together), at most `maxSize` members, then runs
 * in a fiber of `scope`; a lone write waits no longer than that.
 */
export const make = (tx: Transactor["Type"], scope: Scope.Scope, options: { readonly maxSize: number }): GroupCommit => {
  let gathering: Array<Member> | undefined

  const settle = (member: Member, exit: Exit.Exit<unknown, unknown>) => Deferred.done(member.done, exit)

  const alone = (member: Member) => Effect.flatMap(Effect.exit(tx.withTransaction(member.effect)), (exit) => settle(member, exit))

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

  // Not interrupted, even when the scope closes: a group that started gathering commits, and its members learn how.
  const commit = (group: Array<Member>) =>
    Effect.uninterruptible(Effect.zipRight(
      afterDueIo,
      Effect.suspend(() => {
        if (gathering === group) gathering = undefined
        Metrics.observe(Metrics.groupCommitBatch, group.length)
        return group.length === 1 ? alone(group[0]!) : together(group)
      })
    ))

  return {
    run: <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.flatMap(Deferred.make<unknown, unknown>(), (done) =>
        Effect.suspend(() => {
          const member: Member = { effect, done }
          const waiting = Deferred.await(done) as Effect.Effect<A, E | StorageError>
          if (gathering !== undefined && gathering.length < options.maxSize) {
            gathering.push(member)
            return waiting
          }
          const group = [member]
          gathering = group
          return Effect.zipRight(Effect.forkIn(commit(group), scope), waiting)
        }))
  }
}
