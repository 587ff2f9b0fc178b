import { Errors, Metrics, Recent, Steps, Tracing } from "@hosting/core"
import { Array as Arr, Cause, DateTime, Effect } from "effect"

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

/**
 * Stored times read or written lately, parsed, by their text (at most
 * 10,000, about a hundred bytes each; the first kept go first): a
 * list read again reads the same times, and a row read back after it was
 * written reads the time it was written with (a `DateTime` is an immutable
 * value), so that the one object carries its encoding to the answers too
 * (the compiled encoder of `@hosting/http` keeps a date's text with the
 * date).
 */
const times = Recent.make<string, DateTime.Utc>(10_000)

/** The last time formatted, by its instant, and its text: the times of one write (a row, its turn, its conversation) are one. */
let lastMillis = Number.NaN
let lastText = ""

/** Stored form of a time: ISO 8601 UTC with milliseconds (sortable as text). */
export const timeText = (time: DateTime.Utc): string => {
  if (time.epochMillis === lastMillis) return lastText
  const text = DateTime.formatIso(time)
  lastMillis = time.epochMillis
  lastText = text
  // Read back as this time (a zoned one would be read back as a UTC time, as the text says).
  if (time._tag === "Utc" && !times.has(text)) times.set(text, time)
  return text
}

/** The `count` digits of `text` from `at` as a number, or NaN where one is not a digit. */
const digits = (text: string, at: number, count: number): number => {
  let value = 0
  for (let i = at; i < at + count; i++) {
    const digit = text.charCodeAt(i) - 48
    if (digit < 0 || digit > 9) return Number.NaN
    value = value * 10 + digit
  }
  return value
}

/**
 * The epoch milliseconds of a time in the form `timeText` writes
 * (`YYYY-MM-DDTHH:MM:SS.mmmZ`, a year from 0100), with each part in the
 * range the JavaScript date parser accepts, where that parser normalises as
 * `Date.UTC` does (a 30th of February is a 2nd of March for both); NaN for
 * any other text, which the parser reads instead.
 */
export const storedMillis = (text: string): number => {
  if (
    text.length !== 24 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 ||
    text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || text.charCodeAt(19) !== 46 || text.charCodeAt(23) !== 90
  ) return Number.NaN
  const year = digits(text, 0, 4)
  const month = digits(text, 5, 2)
  const day = digits(text, 8, 2)
  const hour = digits(text, 11, 2)
  const minute = digits(text, 14, 2)
  const second = digits(text, 17, 2)
  const milli = digits(text, 20, 3)
  if (
    !(year >= 100 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 && second <= 59 &&
      milli >= 0)
  ) {
    return Number.NaN
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, milli)
}

/** Reads a stored time. */
export const timeOf = (text: string): DateTime.Utc => {
  let time = times.get(text)
  if (time === undefined) {
    const millis = storedMillis(text)
    time = Number.isNaN(millis) ? DateTime.unsafeMake(text) : DateTime.unsafeMake(millis)
    times.set(text, time)
  }
  return time
}

/**
 * Options for building a branded id from a row this storage wrote: the
 * schema checked the value on its way in, so it is not checked again on
 * every read. Records are made with `Trusted.make` of `@hosting/core`.
 */
export const trusted = { disableValidation: true } as const

/**
 * Keys a statement of one page reads at most, each a few terms of a
 * `UNION ALL` (SQLite takes at most 500 terms of a compound `SELECT`).
 */
export const keysPerStatement = 100

/** The distinct keys, `keysPerStatement` at a time: what each statement of a read over many keys is given. */
export const chunksOfKeys = <K>(keys: ReadonlyArray<K>): Array<Array<K>> => Arr.chunksOf([...new Set(keys)], keysPerStatement)

/**
 * A page over keys read `keysPerStatement` at a time: `read` gives, for a
 * chunk of the distinct keys, its rows in the page's order from `skip` on,
 * at most `take` of them. One chunk's rows are the page; the first rows of
 * several chunks are merged in `order` and the page taken from them.
 */
export const pageOverKeys = <K, Row, E, R>(
  keys: ReadonlyArray<K>,
  page: { readonly skip: number; readonly take: number },
  order: (x: Row, y: Row) => number,
  read: (chunk: ReadonlyArray<K>, skip: number, take: number) => Effect.Effect<ReadonlyArray<Row>, E, R>
): Effect.Effect<ReadonlyArray<Row>, E, R> => {
  const chunks = chunksOfKeys(keys)
  if (chunks.length === 1) return read(chunks[0]!, page.skip, page.take)
  return Effect.map(
    Effect.forEach(chunks, (chunk) => read(chunk, 0, page.skip + page.take)),
    (pages) => pages.flat().sort(order).slice(page.skip, page.skip + page.take)
  )
}
