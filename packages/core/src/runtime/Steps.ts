/**
 * Combinators with the meaning of Effect's own that cost fewer steps of the
 * fiber's run loop on the path every request takes.
 *
 * Effect's `catchAll` is a match with `succeed` on its success side: a
 * success that passes it costs a step of its own (the `succeed` the match
 * returns, evaluated by the run loop) besides the step that installs it. A
 * frame that only failures visit (`catchAllCause`) is passed over by a
 * success without a step. On a server each step is a call through the run
 * loop's megamorphic dispatch and an object for the collector, so a catch
 * on every request's path is worth one of these (docs/performance.md, "Fewer
 * steps of the run loop").
 */
import { Cause, Effect, Option } from "effect"
import { dual } from "effect/Function"

/**
 * `Effect.catchAll`: a failure goes to `f`; a defect or an interruption
 * stays as it is (and, as with `catchAll`, failures beside a defect become
 * defects). A success passes without a step.
 */
export const catchFailure: {
  <E, A2, E2, R2>(f: (error: E) => Effect.Effect<A2, E2, R2>): <A, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A | A2, E2, R | R2>
  <A, E, R, A2, E2, R2>(self: Effect.Effect<A, E, R>, f: (error: E) => Effect.Effect<A2, E2, R2>): Effect.Effect<A | A2, E2, R | R2>
} = dual(2, <A, E, R, A2, E2, R2>(self: Effect.Effect<A, E, R>, f: (error: E) => Effect.Effect<A2, E2, R2>) =>
  Effect.catchAllCause(self, (cause): Effect.Effect<A2, E2, R2> => {
    if (Cause.isDie(cause)) return Effect.failCause(Cause.flatMap(cause, (error) => Cause.die(error)))
    const failure = Cause.failureOption(cause)
    return Option.isSome(failure) ? f(failure.value) : Effect.failCause(cause as Cause.Cause<never>)
  }))
