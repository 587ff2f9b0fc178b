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
import { Cause, Clock, Context, DateTime, Effect, Exit, type FiberStatus, Option, RuntimeFlags } from "effect"
import { dual, identity } from "effect/Function"

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

/**
 * Uninterruptible regions opened only where the fiber can be interrupted.
 *
 * Effect opens a region for every `uninterruptible`, `uninterruptibleMask`
 * and `ensuring` it runs, whether the fiber is interruptible or not: a step
 * to change the flags and one to put them back, and for a mask the same
 * again for `restore`. Most of the regions on a chat message's path are
 * inside another one (a group commit, a transaction, a reply's fiber, which
 * starts uninterruptible), where they change nothing: about 50 steps of a
 * message's 450 (docs/performance.md, "Regions only where interruptible").
 * The helpers below look at the fiber's flags when they run and open a
 * region only where one is needed; the `...For` forms take the status a
 * caller already has from `Effect.withFiberRuntime`, at no step of their own.
 */

/** A fiber's status where it runs an effect, as `Effect.withFiberRuntime` gives it. */
export type Status = FiberStatus.Running

/** Whether a fiber with `status` can be interrupted where it is: its interruption flag, which each region turns off. */
export const interruptibleAt = (status: Status): boolean => RuntimeFlags.interruption(status.runtimeFlags)

/** The restore of a mask opened where the fiber was uninterruptible: Effect's own is `uninterruptible`, which changes nothing there. */
const keep: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R> = identity

/** `effect` where nothing interrupts it, for a fiber with `status`: as it is where the fiber is uninterruptible already. */
export const uninterruptibleFor = <A, E, R>(status: Status, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  interruptibleAt(status) ? Effect.uninterruptible(effect) : effect

/** `Effect.uninterruptible`, in one step where the fiber is uninterruptible already. */
export const uninterruptible = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((_, status) => uninterruptibleFor(status, effect))

/** `Effect.uninterruptibleMask(f)` for a fiber with `status`: where it is uninterruptible already, `f` runs with a restore that keeps an effect as it is. */
export const uninterruptibleMaskFor = <A, E, R>(
  status: Status,
  f: (restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => interruptibleAt(status) ? Effect.uninterruptibleMask(f) : f(keep)

/** `Effect.uninterruptibleMask`, in one step where the fiber is uninterruptible already. */
export const uninterruptibleMask = <A, E, R>(
  f: (restore: <AX, EX, RX>(effect: Effect.Effect<AX, EX, RX>) => Effect.Effect<AX, EX, RX>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> => Effect.withFiberRuntime((_, status) => uninterruptibleMaskFor(status, f))

/**
 * `Effect.ensuring` for an effect that runs where nothing interrupts it
 * (inside an uninterruptible region, or the unrestored part of a mask):
 * there a match runs the finalizer after any end, which is all that the
 * mask of Effect's `ensuring` adds. Interruptible parts inside `self` are
 * fine: their interruption reaches the match once the region's flags are
 * back. Where the fiber may be interruptible, use `ensuring`.
 */
export const ensuringInRegion = <A, E, R, X, R2>(
  self: Effect.Effect<A, E, R>,
  finalizer: Effect.Effect<X, never, R2>
): Effect.Effect<A, E, R | R2> =>
  Effect.matchCauseEffect(self, {
    onFailure: (cause) =>
      Effect.matchCauseEffect(finalizer, {
        onFailure: (again) => Effect.failCause(Cause.sequential(cause, again)),
        onSuccess: () => Effect.failCause(cause)
      }),
    onSuccess: (value) => Effect.as(finalizer, value)
  })

/**
 * `Effect.onExit` for an effect that runs where nothing interrupts it, as
 * `ensuringInRegion` is `ensuring`: `cleanup` gets how `self` ended, after
 * any end, without the mask of Effect's own.
 */
export const onExitInRegion = <A, E, R, X, R2>(
  self: Effect.Effect<A, E, R>,
  cleanup: (exit: Exit.Exit<A, E>) => Effect.Effect<X, never, R2>
): Effect.Effect<A, E, R | R2> =>
  Effect.matchCauseEffect(self, {
    onFailure: (cause) =>
      Effect.matchCauseEffect(cleanup(Exit.failCause(cause)), {
        onFailure: (again) => Effect.failCause(Cause.sequential(cause, again)),
        onSuccess: () => Effect.failCause(cause)
      }),
    onSuccess: (value) => Effect.as(cleanup(Exit.succeed(value)), value)
  })

/** `Effect.ensuring` for a fiber with `status`: the mask only where the fiber is interruptible. */
export const ensuringFor = <A, E, R, X, R2>(
  status: Status,
  self: Effect.Effect<A, E, R>,
  finalizer: Effect.Effect<X, never, R2>
): Effect.Effect<A, E, R | R2> =>
  interruptibleAt(status) ? Effect.ensuring(self, finalizer) : ensuringInRegion(self, finalizer)

/** `Effect.ensuring`, without a mask of its own where the fiber is uninterruptible already. */
export const ensuring: {
  <X, R2>(finalizer: Effect.Effect<X, never, R2>): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R | R2>
  <A, E, R, X, R2>(self: Effect.Effect<A, E, R>, finalizer: Effect.Effect<X, never, R2>): Effect.Effect<A, E, R | R2>
} = dual(2, <A, E, R, X, R2>(self: Effect.Effect<A, E, R>, finalizer: Effect.Effect<X, never, R2>) =>
  Effect.withFiberRuntime<A, E, R | R2>((_, status) => ensuringFor(status, self, finalizer)))

/**
 * The fiber's clock, read in the step that runs `f`. `Clock.currentTimeMillis`
 * takes three steps (the clock, its `sync`, the value passed on), and
 * `DateTime.now` two more for its `map`; a `flatMap` after either one more.
 * The clock is the one Effect's own reads give (`Effect.withClock`, a
 * `TestClock`): the fiber's default services.
 */
export const withClock = <A, E, R>(f: (clock: Clock.Clock) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => f(Context.get(fiber.currentDefaultServices, Clock.Clock)))

/** `DateTime.now`, in one step and the value passed on. */
export const now: Effect.Effect<DateTime.Utc> = withClock((clock) => Effect.succeed(DateTime.unsafeMake(clock.unsafeCurrentTimeMillis())))

/** `Effect.flatMap(DateTime.now, f)`, in one step. */
export const withNow = <A, E, R>(f: (now: DateTime.Utc) => Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  withClock((clock) => f(DateTime.unsafeMake(clock.unsafeCurrentTimeMillis())))
