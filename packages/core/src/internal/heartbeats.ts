/**
 * Heartbeats of many open streams on one timer fiber. The streams wait in
 * the order their next heartbeat is due, on a list linked both ways so that
 * a closing stream leaves it at once; every deadline is one interval after
 * the stream's start or last heartbeat, so appending keeps the order.
 */
import { Clock, Duration, Effect, type Scope } from "effect"

/** A stream, as the timer sees it. */
export interface Beating {
  /** Called at each heartbeat. */
  readonly beat: () => void
  /** When its next heartbeat is due (ms on the Clock). */
  deadline: number
  previous: Beating | undefined
  next: Beating | undefined
}

/** A stream's place on the timer, before it joins. */
export const beating = (beat: () => void): Beating => ({ beat, deadline: 0, previous: undefined, next: undefined })

export interface Heartbeats {
  /** Puts a stream on the timer: its first heartbeat comes one interval from now. */
  readonly add: (stream: Beating) => Effect.Effect<void>
  /** Takes a stream off the timer (nothing if it is not on it). */
  readonly remove: (stream: Beating) => void
}

/**
 * Heartbeats every `interval` for the streams added. The timer fiber runs in
 * `scope` while streams are on it, on the clock of the stream that started
 * it, and stops when the last one has left.
 */
export const make = (interval: Duration.Duration, scope: Scope.Scope): Heartbeats => {
  const every = Duration.toMillis(interval)
  let first: Beating | undefined
  let last: Beating | undefined
  let running = false

  const append = (stream: Beating) => {
    stream.previous = last
    stream.next = undefined
    if (last === undefined) first = stream
    else last.next = stream
    last = stream
  }

  const remove = (stream: Beating) => {
    if (stream.previous === undefined) {
      if (first !== stream) return
      first = stream.next
    } else {
      stream.previous.next = stream.next
    }
    if (stream.next === undefined) last = stream.previous
    else stream.next.previous = stream.previous
    stream.previous = undefined
    stream.next = undefined
  }

  const timer = Effect.gen(function*() {
    while (true) {
      const next = first
      if (next === undefined) {
        running = false
        return
      }
      const now = yield* Clock.currentTimeMillis
      if (next.deadline > now) {
        yield* Effect.sleep(Duration.millis(next.deadline - now))
        continue
      }
      remove(next)
      next.deadline = now + every
      append(next)
      try {
        next.beat()
      } catch {
        // A stream's own failure must not stop the others' heartbeats.
      }
    }
  })

  // One generator function for every call (docs/decisions.md, "Generator functions made once").
  const add = Effect.fnUntraced(function*(stream: Beating) {
    stream.deadline = (yield* Clock.currentTimeMillis) + every
    append(stream)
    if (running) return
    running = true
    yield* Effect.forkIn(timer.pipe(Effect.withClock(yield* Effect.clock), Effect.interruptible), scope)
  })

  return { add, remove }
}
