import { Errors, Metrics, Steps, Tracing } from "@hosting/core"
import { Cause, DateTime, Effect } from "effect"

/**
 * The span of one repository method (made only while a tracer is enabled).
 * The call site a span records would always be this module, so none is
 * captured (capturing costs an Error per call).
 */
const spanOptions = { captureStackTrace: false } as const

/**
 * Maps driver and decoding failures of one repository method into the port's
 * error, in the method's span, and records its time
 * (`hosting_storage_operation_duration_seconds`). The method runs to its end
 * even when its fiber is interrupted (the interruption takes effect after):
 * the Postgres driver cancels an interrupted statement by signalling its
 * backend process, and a signal that arrives after the statement finished
 * cancels whatever that connection runs next, another caller's statement.
 */
export const storageError = (operation: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  // One step looks at the fiber for all three: the time it starts, whether a region is needed (not inside a
  // transaction or a group commit, which are one already: Steps.uninterruptibleFor), and whether a span is.
  Effect.withFiberRuntime<A, Errors.StorageError, R>((fiber, status) => {
    const started = performance.now()
    const observe = () => Metrics.observeStorage(operation, (performance.now() - started) / 1000)
    // One match for the error, the time and the result: what mapError and onExit do, in a third of the steps
    // (every statement of every request takes this path). As mapError does, a failure becomes the port's error
    // and a defect or an interruption stays as it is.
    const matched = Effect.matchCauseEffect(effect, {
      onFailure: (cause) => {
        observe()
        const failure = Cause.failureOrCause(cause)
        return failure._tag === "Left"
          ? Effect.fail(new Errors.StorageError({ operation, cause: failure.left }))
          : Effect.failCause(failure.right)
      },
      onSuccess: (value) => {
        observe()
        return Effect.succeed(value)
      }
    })
    const whole = Steps.uninterruptibleFor(status, matched)
    return Tracing.withSpanIn(fiber, whole, operation, spanOptions)
  })

/** Stored form of a time: ISO 8601 UTC with milliseconds (sortable as text). */
export const timeText = (time: DateTime.Utc): string => DateTime.formatIso(time)

/** Most stored times kept parsed (about a hundred bytes each); the oldest go first. */
const keptTimes = 10_000

/** Stored times read lately, parsed: a list read again reads the same times (a `DateTime` is an immutable value). */
const parsedTimes = new Map<string, DateTime.Utc>()

/** Reads a stored time. */
export const timeOf = (text: string): DateTime.Utc => {
  let time = parsedTimes.get(text)
  if (time === undefined) {
    time = DateTime.unsafeMake(text)
    if (parsedTimes.size >= keptTimes) parsedTimes.delete(parsedTimes.keys().next().value!)
    parsedTimes.set(text, time)
  }
  return time
}

/**
 * Options for building a branded id from a row this storage wrote: the
 * schema checked the value on its way in, so it is not checked again on
 * every read. Records are made with `Trusted.make` of `@hosting/core`.
 */
export const trusted = { disableValidation: true } as const
