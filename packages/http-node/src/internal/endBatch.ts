/**
 * Answers whose whole body is in hand, ended together at the end of the
 * event loop's turn rather than each as soon as its handler returns.
 *
 * A turn reads every request that arrived while the server was busy and
 * runs their handlers one after the other. Ending each answer at once
 * spaces the writes a handler's time apart; a client on the same machine
 * (a proxy beside the server, a load generator) falls asleep between them,
 * and every write then pays, inside its system call, for waking that
 * client's CPU again. Written back to back, one wake serves the batch: on
 * the bench's machines a 2-message history read cost a third less CPU, and
 * its p99 fell (docs/performance.md, "Answers ended together").
 *
 * What it costs is latency: an answer waits for the handlers read after it
 * in the same turn. The wait is bounded: a batch is written at once when
 * `maxWaiting` answers wait, or when the first has waited `maxWaitMs`.
 * Each answer is still its own system call; none is merged with another.
 */
import type { ServerResponse } from "node:http"

/** Most answers held in one batch. */
export const maxWaiting = 16

/** Longest an answer waits, in ms (checked as answers arrive; the turn's end comes first in practice). */
export const maxWaitMs = 2

type Body = Uint8Array | string | undefined

/** Waiting answers: their responses and bodies, in the order they were ended. */
let outs: Array<ServerResponse> = []
let bodies: Array<Body> = []
/** When the oldest waiting answer was ended (performance.now()). */
let since = 0
let scheduled = false

const endAll = (): void => {
  const waitingOuts = outs
  const waitingBodies = bodies
  outs = []
  bodies = []
  for (let i = 0; i < waitingOuts.length; i++) {
    try {
      waitingOuts[i]!.end(waitingBodies[i])
    } catch {
      // A response that cannot end any more (its socket failed) fails alone: the others still go.
    }
  }
}

const atTurnEnd = (): void => {
  scheduled = false
  endAll()
}

/** Ends `out` with `body` at the end of this turn of the event loop (or sooner: see `maxWaiting`, `maxWaitMs`). */
export const endSoon = (out: ServerResponse, body?: Uint8Array | string): void => {
  const now = performance.now()
  if (outs.length === 0) since = now
  outs.push(out)
  bodies.push(body)
  if (outs.length >= maxWaiting || now - since >= maxWaitMs) return endAll()
  if (!scheduled) {
    scheduled = true
    setImmediate(atTurnEnd)
  }
}

/** Ends every waiting answer now (a server that stops writes them before it closes connections). */
export const flush = (): void => endAll()

/** How many answers wait (for tests). */
export const waiting = (): number => outs.length
