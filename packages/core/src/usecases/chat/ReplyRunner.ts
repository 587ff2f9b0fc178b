/**
 * The reply runner: stores turns (in transactions shared with the turns
 * sent at the same time), lets each turn's strategy decide what happens to
 * a reply still streaming (`interrupt` stops it, `queue` waits for it,
 * `reject` was refused by the store), runs each reply in a supervised fiber that
 * publishes every chunk as it arrives, keeps what arrived in storage (a
 * flush for all replies in flight every interval, their last writes in
 * group commits), and stops replies when asked. The replies' leases are
 * `Leases.ts`; the turns' traces, stored with the flushes, `TurnTraces.ts`;
 * a queued reply's wait for the replies before it, `QueuedReplies.ts`.
 */
import { Cause, DateTime, Effect, Fiber, FiberId, Option } from "effect"
import type { ConversationId, Message, MessageId, MessageStatus } from "../../model/Conversation.js"
import type { DeploymentRecord } from "../../model/Deployment.js"
import type { StorageError } from "../../model/Errors.js"
import { withoutNul } from "../../model/Text.js"
import type { TraceStatus } from "../../model/Trace.js"
import * as Daemons from "../../internal/daemons.js"
import * as GroupCommit from "../../internal/groupCommit.js"
import { Outcome } from "../../internal/outcome.js"
import { whileBusy } from "../../internal/whileBusy.js"
import { AgentRuntime, type AgentError } from "../../ports/AgentRuntime.js"
import { ConversationStore, IdGenerator, Transactor } from "../../ports/Ports.js"
import * as ReplyBus from "../../ports/ReplyBus.js"
import { ChatConfig, failure } from "./ChatConfig.js"
import { InFlightMap, renewFiberRoots } from "../../runtime/InFlight.js"
import * as Metrics from "../../runtime/Metrics.js"
import * as Steps from "../../runtime/Steps.js"
import * as Leases from "./Leases.js"
import { awaitEarlier } from "./QueuedReplies.js"
import { type NewTurn, type RunningReply, runningReply, storeTurnWith, streamingWith, type TurnOutcome } from "./Turns.js"
import * as TurnTraces from "./TurnTraces.js"

// What a turn is on its way through the runner, and the messages a stored turn starts with: Turns.ts.
export type { NewTurn, TurnOutcome } from "./Turns.js"

/** Builds the runner for the life of the scope; at start its leases close the replies that a stopped process left streaming. */
export const make = Effect.gen(function*() {
  // Every reply is a daemon fiber, in effect's register of root fibers while it runs.
  renewFiberRoots()
  const conversations = yield* ConversationStore
  const runtime = yield* AgentRuntime
  const bus = yield* ReplyBus.ReplyBus
  const ids = yield* IdGenerator
  const tx = yield* Transactor
  const config = yield* ChatConfig

  // The runner's registries live as long as it does while their entries come and go: kept so as not to promote
  // what they hold (runtime/InFlight.ts).
  const running = new InFlightMap<ConversationId, RunningReply>()
  /** The queued replies of each conversation: stored, waiting for the replies of earlier turns to end. */
  const queued = new InFlightMap<ConversationId, Set<RunningReply>>()
  const queuedOf = (conversation: ConversationId): ReadonlyArray<RunningReply> => [...(queued.get(conversation) ?? [])]
  const dequeue = (reply: RunningReply) => {
    const waiting = queued.get(reply.conversation)
    if (waiting?.delete(reply) === true && waiting.size === 0) queued.delete(reply.conversation)
  }

  // Made before the replies' set, so that it closes after they stop at shutdown, with the traces of their ends.
  const turnTraces = yield* TurnTraces.make
  const replies = yield* Daemons.make

  // A queued reply's lease is renewed too: the reply it waits for may run on another process.
  const leases = yield* Leases.make(() => running.size > 0 || queued.size > 0)

  const scope = yield* Effect.scope
  // Turns and the last writes of replies that arrive together share a transaction.
  const grouped = GroupCommit.make(tx, { maxSize: 64 })

  /** Stores a reply's content with a status. */
  const write = (reply: RunningReply, status: MessageStatus) =>
    Effect.suspend(() => {
      reply.stored = reply.content.length
      return Steps.withNow((now) =>
        grouped.run(conversations.updateMessage(reply.message_id, reply.content, status, now), { oneStatement: true }))
    })

  /** The last write of a reply: no flush follows it, and a flush in flight lands before it. */
  const finish = (reply: RunningReply, status: MessageStatus) =>
    Effect.suspend(() => {
      reply.ended = true
      const inFlight = reply.flushing
      return inFlight === undefined ? write(reply, status) : Effect.zipRight(inFlight.await, write(reply, status))
    })

  /**
   * Stores what arrived of every reply in flight since its last write, in
   * one write for all of them; a reply that has ended is left to its last
   * write, which waits for this one.
   */
  const flushAll = Effect.suspend(() => {
    const due = [...running.values()].filter((reply) => !reply.ended && reply.content.length > reply.stored)
    if (due.length === 0) return Effect.void
    const done = new Outcome<void>()
    const progress = due.map((reply) => {
      reply.flushing = done
      reply.stored = reply.content.length
      return { id: reply.message_id, content: reply.content }
    })
    return DateTime.now.pipe(
      Effect.flatMap((now) => conversations.flushReplies(progress, now)),
      Effect.catchAll((e) => {
        // Written again at the next flush, whether more arrives or not.
        for (const reply of due) reply.stored = 0
        return Effect.logWarning(`chat: a flush of ${due.length} replies failed; the next one retries`, e)
      }),
      Effect.ensuring(Effect.sync(() => {
        for (const reply of due) {
          if (reply.flushing === done) reply.flushing = undefined
        }
        done.succeed(undefined)
      }))
    )
  })

  // While replies are in flight here, one fiber stores what arrived of each every flush interval
  // (a reply that ends sooner is written once, at its end) and the traces of the turns that ended.
  const keepFlushing = whileBusy(
    scope,
    config.flushInterval,
    () => running.size > 0 || turnTraces.waiting(),
    flushAll.pipe(Effect.zipRight(turnTraces.write))
  )

  const publish = (conversation: ConversationId, event: ReplyBus.ReplyEvent) => Effect.sync(() => bus.publish(conversation, event))

  /**
   * Runs one reply: streams from the agent, publishes every chunk, stores it
   * at the end (the flusher stores it meanwhile). `before` comes first and
   * gives the conversation before the turn: at once, or once the replies
   * that a queued reply waits for have ended.
   */
  const runReply = (
    reply: RunningReply,
    deployment: DeploymentRecord,
    before: Effect.Effect<ReadonlyArray<Message>, StorageError>,
    turn: Message
  ) => {
    let outcome: TraceStatus = "error"
    /** When the reply started, for its trace: a queued reply starts once it stops waiting. */
    let startNanos = 0n
    const end = (status: MessageStatus, error: string) =>
      finish(reply, status).pipe(
        Effect.zipRight(publish(reply.conversation, { _tag: "Failed", message_id: reply.message_id, error })),
        Effect.catchAll((e: StorageError) => Effect.logError("chat: could not store the end of a reply", e))
      )
    // Called by the runtime as each chunk arrives, from plain code: no fiber turn per chunk.
    // A NUL from the agent becomes U+FFFD: no stored text holds one (Text.ts).
    const delta = (text: string) => {
      const chunk = withoutNul(text)
      const offset = reply.content.length
      reply.content += chunk
      bus.publish(reply.conversation, { _tag: "Delta", message_id: reply.message_id, offset, delta: chunk, at: Date.now() })
    }
    const stream = (history: ReadonlyArray<Message>) =>
      runtime.reply({ deployment, conversation: reply.conversation, history, message: turn, traceparent: reply.trace?.traceparent }, delta)
    // A cancel taken by another process arrives on the bus; this process stops the reply itself. A listener in
    // plain code, as the bus calls it: no fiber, queue or wake-up per reply and event (docs/performance.md).
    const cancelRequests = bus.listen(reply.conversation, (event) => {
      if (event._tag !== "CancelRequested" || event.message_id !== reply.message_id || reply.cancelled) return
      reply.cancelled = true
      reply.fiber?.unsafeInterruptAsFork(FiberId.none)
    })
    // Without a generator: one made here would be a new generator function for every reply (docs/decisions.md, "Generator functions made once").
    const receive = Effect.flatMap(before, (history) =>
      Steps.withClock((clock) => {
        startNanos = clock.unsafeCurrentTimeNanos()
        return stream(history).pipe(
          Effect.zipRight(Effect.suspend(() => finish(reply, "complete"))),
          Effect.zipRight(Effect.suspend(() => {
            outcome = "ok"
            return publish(reply.conversation, {
              _tag: "Completed",
              message_id: reply.message_id,
              content: reply.content,
              trace_id: reply.trace?.trace_id ?? null
            })
          }))
        )
      }))
    const listening = config.sharedStorage ? Effect.scoped(Effect.zipRight(cancelRequests, receive)) : receive
    // Only the agent's part is interruptible: the fiber starts uninterruptible with its ending in place, so a
    // stop that comes before its first step still stores the reply's end. The rest runs in that region, where a
    // catch and matches do what `onInterrupt` and `ensuring` do, without masks of their own (runtime/Steps.ts).
    return Effect.interruptible(listening).pipe(
      Steps.catchFailure((error: AgentError | StorageError) =>
        end("failed", error._tag === "AgentError" ? error.message : "The reply could not be stored.")
      ),
      Effect.catchAllCause((cause) => {
        if (!Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
        if (reply.cancelled) outcome = "ok"
        const ending = reply.cancelled ? end("cancelled", failure.cancelled) : end("failed", failure.shutdown)
        return Steps.ensuringInRegion(Effect.failCause(cause), ending)
      }),
      (run) =>
        Steps.ensuringInRegion(
          run,
          Effect.suspend(() => {
            dequeue(reply)
            if (running.get(reply.conversation) === reply) {
              running.delete(reply.conversation)
              Metrics.add(Metrics.repliesInFlight, -1)
            }
            return Effect.sync(() => reply.done.succeed(undefined))
          })
        ),
      (run) =>
        Steps.withClock((clock) => {
          startNanos = clock.unsafeCurrentTimeNanos()
          const recorded = Effect.suspend(() =>
            reply.trace === undefined ? keepFlushing : Effect.zipRight(turnTraces.record(deployment, turn, reply, startNanos, outcome, reply.trace), keepFlushing)
          )
          return Steps.ensuringInRegion(run, recorded)
        }),
      Steps.uninterruptible
    )
  }

  /** Asks a reply to stop; its fiber stores it as cancelled with what arrived. One not started yet stops once it is. */
  const stop = (reply: RunningReply) =>
    Effect.suspend(() => {
      reply.cancelled = true
      return reply.fiber === undefined ? Effect.void : Fiber.interruptFork(reply.fiber)
    })

  /** Stops a reply and waits until it is stored as cancelled. */
  const stopAndAwait = (reply: RunningReply) => Effect.zipRight(stop(reply), reply.done.await)

  /**
   * The turns of each conversation between the start of their storage and
   * the start of their reply, and the replies that a cancel asked to stop
   * meanwhile: such a cancel finds the reply stored but not running yet,
   * and the reply stops as soon as it starts.
   */
  const starting = new InFlightMap<ConversationId, { turns: number; readonly cancelled: Set<MessageId> }>()

  /**
   * Starts the reply of a stored turn, in the conversation's order: it
   * supersedes the reply of an earlier turn still in flight, which is
   * stopped (and awaited, so that the answer to the send finds it stored
   * as cancelled), and a later turn's reply that started first supersedes
   * it. Turns stored together resume in any order; whichever starts its
   * reply first, only the reply of the conversation's last turn runs on.
   */
  const startReply = Effect.fnUntraced(function*(reply: RunningReply, run: Effect.Effect<void>) {
    const later = running.get(reply.conversation)
    if (later !== undefined && later.turn > reply.turn) {
      // Superseded: the later turn stopped every earlier reply when it started.
      admit(reply)
      return yield* fork(reply, run)
    }
    const previous = admit(reply)
    yield* fork(reply, run)
    // The replies of earlier turns stop: the one in flight, and those queued behind it.
    for (const waiting of queuedOf(reply.conversation)) if (waiting.turn < reply.turn) yield* stopAndAwait(waiting)
    if (previous !== undefined) yield* stopAndAwait(previous)
  })

  /**
   * Makes a reply the conversation's reply in flight, unless a later turn's
   * reply is already (then it is to stop). Gives the reply it takes over
   * from, to be stopped.
   */
  const admit = (reply: RunningReply): RunningReply | undefined => {
    const previous = running.get(reply.conversation)
    const superseded = previous !== undefined && previous.turn > reply.turn
    if (superseded || starting.get(reply.conversation)?.cancelled.has(reply.message_id) === true) reply.cancelled = true
    if (superseded) return undefined
    if (!running.has(reply.conversation)) Metrics.add(Metrics.repliesInFlight, 1)
    running.set(reply.conversation, reply)
    return previous
  }

  /** Forks a reply's fiber where nothing interrupts it (the fiber starts uninterruptible, see runReply). */
  const fork = Effect.fnUntraced(function*(reply: RunningReply, run: Effect.Effect<void>) {
    yield* leases.keepRenewing
    yield* keepFlushing
    reply.fiber = yield* Steps.uninterruptible(replies.run(run))
    // A stop asked for before the fiber was there takes effect now.
    if (reply.cancelled) yield* Fiber.interruptFork(reply.fiber)
  })

  /**
   * What a queued reply does before it runs: waits for the replies
   * `earlier` to end, then becomes the conversation's reply in flight;
   * answers the conversation as they left it.
   */
  const afterEarlier = Effect.fnUntraced(function*(reply: RunningReply, earlier: ReadonlyArray<MessageId>, turn: Message) {
    const history = yield* awaitEarlier(bus, conversations, reply, earlier, turn)
    dequeue(reply)
    const previous = admit(reply)
    if (reply.cancelled) return yield* Effect.interrupt
    yield* keepFlushing
    // Ended already (it was awaited); stopping it changes nothing but keeps the order certain.
    if (previous !== undefined) yield* stopAndAwait(previous)
    return history
  })

  /**
   * Queues the reply of a stored turn behind the replies `earlier`: its
   * fiber waits for them to end, then makes it the conversation's reply in
   * flight and runs it with the conversation as they left it. Until then it
   * is stored as streaming (empty) and its lease is renewed; a stop (a
   * cancel, a later turn that interrupts) ends it as cancelled.
   */
  const enqueue = (reply: RunningReply, deployment: DeploymentRecord, earlier: ReadonlyArray<MessageId>, turn: Message) =>
    Effect.suspend(() => {
      const waiting = queued.get(reply.conversation) ?? new Set<RunningReply>()
      waiting.add(reply)
      queued.set(reply.conversation, waiting)
      if (starting.get(reply.conversation)?.cancelled.has(reply.message_id) === true) reply.cancelled = true
      return fork(reply, runReply(reply, deployment, afterEarlier(reply, earlier, turn), turn))
    })

  // A turn's writes, as a member of a group commit (Turns.ts).
  const storeTurn = storeTurnWith({ ids, conversations, leases, messageLimit: config.messageLimit })

  /** Stores a turn and starts its reply (see `take`). */
  const storeAndStart = Effect.fnUntraced(function*(input: NewTurn) {
    // Decided here, in the request: while the server traces itself, the turn's trace is the request's.
    const trace = yield* turnTraces.begin
    const outcome = yield* grouped.run(storeTurn(input, trace))
    switch (outcome._tag) {
      case "NotOwner":
      case "LimitReached":
      case "ReplyInProgress":
        return outcome
      case "Repeated":
        return { _tag: "Stored" as const, message: outcome.message }
    }
    const reply = yield* runningReply(input, outcome.reply.message_id, outcome.turn, trace)
    const history = outcome.history.filter((m) => m.message_id !== outcome.reply.message_id && m.message_id !== outcome.message.message_id)
    // The replies of earlier turns that were streaming when this turn was stored: a queued reply waits for them.
    const earlier = history.flatMap((m) => m.role === "assistant" && m.status === "streaming" ? [m.message_id] : [])
    if (input.concurrent_send === "queue" && earlier.length > 0) {
      yield* enqueue(reply, input.deployment, earlier, outcome.message)
    } else {
      yield* startReply(reply, runReply(reply, input.deployment, Effect.succeed(history), outcome.message))
    }
    return { _tag: "Stored" as const, message: outcome.message }
  })

  /**
   * Stores a turn (in a transaction shared with the turns sent at the same
   * time) and starts its reply. Not to be interrupted: once stored, its
   * reply starts.
   */
  const take = (input: NewTurn): Effect.Effect<TurnOutcome, StorageError> =>
    Effect.withFiberRuntime((_, status) => {
      const conversationId = input.conversation
      const entry = starting.get(conversationId) ?? { turns: 0, cancelled: new Set<MessageId>() }
      entry.turns++
      starting.set(conversationId, entry)
      const settled = Effect.sync(() => {
        if (--entry.turns === 0) starting.delete(conversationId)
      })
      return Steps.ensuringFor(status, storeAndStart(input), settled)
    })

  /**
   * Stops the reply in flight of a conversation. When another process is
   * receiving it (shared storage), the request goes to that process over
   * the bus and the reply ends as cancelled there.
   */
  const cancel = Effect.fnUntraced(function*(id: ConversationId) {
    const here = running.get(id)
    if (here !== undefined) {
      yield* stopAndAwait(here)
      return { status: "cancelled" as const, message_id: here.message_id }
    }
    const latest = yield* conversations.latestReply(id)
    if (Option.isSome(latest) && latest.value.status === "streaming") {
      const messageId = latest.value.message_id
      const started = running.get(id)
      if (started?.message_id === messageId) {
        // It started here meanwhile.
        yield* stopAndAwait(started)
      } else {
        // About to start here (stored, not running yet), or received by another process.
        starting.get(id)?.cancelled.add(messageId)
        bus.publish(id, { _tag: "CancelRequested", message_id: messageId })
      }
      return { status: "cancelled" as const, message_id: messageId }
    }
    return { status: "idle" as const, message_id: null }
  })

  /** The newest state of a message: a running reply's content is ahead of storage. */
  const current = (message: Message, conversation: ConversationId) => {
    const reply = running.get(conversation)
    return reply !== undefined && reply.message_id === message.message_id ? streamingWith(message, reply.content) : message
  }

  return { take, cancel, current } as const
})

