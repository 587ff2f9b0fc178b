/**
 * An outcome that one side settles once and any number of fibers wait for:
 * what a `Deferred` is for, where one is made for every request. Effect
 * makes a `Deferred` by copying the properties of its prototype into a new
 * object, about 5 µs and 2 KB on the bench machines; this one is an object
 * of two fields (docs/performance.md, "Transactions").
 */
import { Effect, Exit } from "effect"

export class Outcome<A, E = never> {
  private exit: Exit.Exit<A, E> | undefined = undefined
  private waiters: Array<(exit: Exit.Exit<A, E>) => void> | undefined = undefined

  /** Settles it, once: a later call changes nothing. */
  done(exit: Exit.Exit<A, E>): void {
    if (this.exit !== undefined) return
    this.exit = exit
    const waiters = this.waiters
    this.waiters = undefined
    if (waiters !== undefined) for (const waiter of waiters) waiter(exit)
  }

  /** Settles it with a value, once. */
  succeed(value: A): void {
    this.done(Exit.succeed(value))
  }

  /** Whether it is settled. */
  get isDone(): boolean {
    return this.exit !== undefined
  }

  /** Waits until it is settled, then ends as it was settled; a waiter that is interrupted stops waiting. */
  get await(): Effect.Effect<A, E> {
    return Effect.async<A, E>((resume) => {
      if (this.exit !== undefined) return resume(this.exit)
      const waiter = (exit: Exit.Exit<A, E>) => resume(exit)
      ;(this.waiters ??= []).push(waiter)
      return Effect.sync(() => {
        const at = this.waiters?.indexOf(waiter) ?? -1
        if (at >= 0) this.waiters!.splice(at, 1)
      })
    })
  }
}
