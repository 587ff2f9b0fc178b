/**
 * The traces of chat turns: each turn that ends is recorded (name `chat`,
 * visible to the conversation's owner only) and waits for the next flush,
 * which stores all that wait in one statement. What still waits when the
 * scope closes is stored then.
 */
import { Effect, Option } from "effect"
import type { Message } from "../../model/Conversation.js"
import type { DeploymentRecord } from "../../model/Deployment.js"
import type { UserId } from "../../model/Ids.js"
import { latencyMs, newSpanId, newTraceId, timeOfNanos, TraceRecord, type TraceStatus, truncate } from "../../model/Trace.js"
import { TraceStore } from "../../ports/Ports.js"
import * as Tracing from "../../runtime/Tracing.js"
import { TracesConfig } from "../Traces.js"
import * as Trusted from "../../model/Trusted.js"
import * as Steps from "../../runtime/Steps.js"


/** The trace a turn is recorded under, and the `traceparent` the agent is sent for it. */
export interface TurnTrace {
  readonly trace_id: string
  readonly traceparent: string
}

/** Builds the batch for the life of the scope; register it before the replies whose traces it keeps, so that it closes after them. */
export const make = Effect.gen(function*() {
  const traces = yield* TraceStore
  const tracing = yield* TracesConfig

  let pending: Array<TraceRecord> = []
  /** Stores the traces waiting, in one statement. */
  const write = Effect.suspend(() => {
    if (pending.length === 0) return Effect.void
    const batch = pending
    pending = []
    return traces.append(batch).pipe(
      Effect.catchAll((e) => Effect.logWarning(`chat: the traces of ${batch.length} turns could not be stored`, e))
    )
  })
  yield* Effect.addFinalizer(() => write)

  /**
   * Records the trace of one agent turn: `ok` when the reply completed or
   * was cancelled by the user, `error` when it failed, under the trace
   * `begin` gave it.
   */
  const record = Effect.fnUntraced(function*(
    deployment: DeploymentRecord,
    turn: Message,
    reply: { readonly owner: UserId; readonly content: string },
    startNanos: bigint,
    status: TraceStatus,
    trace: TurnTrace
  ) {
    if (!tracing.enabled) return
    const end = yield* Steps.withClock((clock) => Effect.succeed(clock.unsafeCurrentTimeNanos()))
    const attachments = turn.attachments.map((a) => `[${a.filename}]`).join(" ")
    pending.push(
      Trusted.make(TraceRecord, {
        publisher_id: deployment.publisher_id,
        agent_name: deployment.agent_name,
        account_id: deployment.account_id,
        owner_id: Option.some(reply.owner),
        trace_id: trace.trace_id,
        name: "chat",
        status,
        latency_ms: latencyMs(startNanos, end),
        input: truncate(attachments === "" ? turn.content : `${turn.content} ${attachments}`.trim()),
        output: truncate(reply.content),
        timestamp: timeOfNanos(startNanos)
      })
    )
  })

  /**
   * The trace of a turn that starts: while the server traces itself, the
   * trace its request started (or continued), else a new one, with a new
   * span id for the turn as the parent of the agent's spans. None while
   * tracing is off.
   */
  const begin: Effect.Effect<TurnTrace | undefined> = Effect.map(Tracing.currentTraceId, (own) => {
    if (!tracing.enabled) return undefined
    const trace_id = Option.getOrElse(own, newTraceId)
    return { trace_id, traceparent: `00-${trace_id}-${newSpanId()}-01` }
  })

  return { begin, record, write, waiting: () => pending.length > 0 } as const
})
