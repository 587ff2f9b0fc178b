import { type Duration, Effect, type Scope } from "effect"

/**
 * Runs `round` every `interval`, in a fiber of `scope`, while `busy` holds.
 * The returned effect starts the fiber when none runs; a round that finds
 * nothing to do ends it, so an idle process keeps no timer and a busy one
 * starts it once.
 */
export const whileBusy = (scope: Scope.Scope, interval: Duration.Duration, busy: () => boolean, round: Effect.Effect<void>) => {
  // The running fiber's token; it lets go of it at the round that ends it (at once, so that a start
  // right after it is not missed) or when it stops otherwise.
  let current: object | undefined
  return Effect.suspend(() => {
    if (current !== undefined) return Effect.void
    const token = {}
    current = token
    const release = () => {
      if (current === token) current = undefined
    }
    const next = Effect.suspend(() => {
      if (busy()) return Effect.as(round, true)
      release()
      return Effect.succeed(false)
    })
    const rounds = next.pipe(Effect.delay(interval), Effect.repeat({ while: (more) => more }), Effect.ensuring(Effect.sync(release)))
    return Effect.asVoid(Effect.forkIn(Effect.interruptible(rounds), scope))
  })
}
