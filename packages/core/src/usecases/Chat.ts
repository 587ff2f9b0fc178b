/**
 * Chat with a deployed agent: conversations, titles, sending a message, the
 * reply streamed by a supervised background fiber that stores it as it
 * arrives, the reply stream, cancellation and message history.
 */
import { Chunk, Clock, Context, DateTime, Deferred, Duration, Effect, Fiber, FiberSet, Option, Runtime, Schedule, Scope } from "effect"
import { AgentRuntime, type AgentError } from "../ports/AgentRuntime.js"
import { EventBus } from "../ports/EventBus.js"
import {
  Attachment,
  type ConversationId,
  type ConversationRecord,
  ConversationSummary,
  graphemeLength,
  graphemeSlice,
  maxTitleLength,
  Message,
  MessageId,
  type MessageStatus
} from "../model/Conversation.js"
import type { DeploymentId, DeploymentRecord } from "../model/Deployment.js"
import type { UserId } from "../model/Ids.js"
import {
  ConversationNotFound,
  AttachmentInvalid,
  DeploymentNotFound,
  InvalidRequest,
  MessageLimitReached,
  type StorageError,
  TooManyAttachments
} from "../model/Errors.js"
import * as DeploymentCache from "../internal/deploymentCache.js"
import * as GroupCommit from "../internal/groupCommit.js"
import * as Heartbeats from "../internal/heartbeats.js"
import { orFail } from "../internal/lookup.js"
import { forEachChunk } from "../internal/stream.js"
import * as Policy from "../model/Policy.js"
import { ConversationStore, DeploymentStore, FileStore, IdGenerator, LeaseOwner, TraceStore, Transactor } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import { type Receiver, type Subscription, toStream } from "../runtime/Receiver.js"
import { ReplyBus, type ReplyEvent } from "../ports/ReplyBus.js"
import { withoutNul } from "../model/Text.js"
import { latencyMs, newTraceId, timeOfNanos, TraceRecord, type TraceStatus, truncate } from "../model/Trace.js"
import { TracesConfig } from "./Traces.js"
import * as Tracing from "../runtime/Tracing.js"

/** Settings of chat. */
export class ChatConfig extends Context.Reference<ChatConfig>()("@hosting/core/ChatConfig", {
  defaultValue: () => ({
    /** User messages a conversation takes before it is terminal. */
    messageLimit: 200,
    /** Files one message may carry. */
    maxAttachments: 16,
    /** How often a streaming reply is written to storage: a crash loses at most this much of it. */
    flushInterval: Duration.millis(100) as Duration.Duration,
    /** Heartbeat interval of reply streams. */
    heartbeat: Duration.seconds(25) as Duration.Duration,
    /**
     * How long a process's claim on the replies it is receiving lasts; it is
     * renewed every third of it. A process that stops renewing (it is stuck)
     * loses its replies to the others once the lease ends; one that died
     * loses them within a second, where the storage tells a dead process
     * (`Ports.LeaseOwner`, Postgres).
     */
    leaseDuration: Duration.seconds(30) as Duration.Duration,
    /**
     * `true` when several processes share the storage (Postgres): at start
     * only replies whose lease ended (or whose process died) are closed,
     * and every process sweeps for them. `false` (one process owns the storage): every reply left
     * streaming at start is closed at once.
     */
    sharedStorage: false
  })
}) {}

/** How often a process sweeps shared storage for replies whose process died. */
const sweepInterval = Duration.millis(250)
/** How long the storage must report a lease owner gone before its replies are closed. */
const deadAfter = Duration.millis(500)
/** Most conversations whose owner a process keeps knowing (about a hundred bytes each). */
const maxKnownOwners = 100_000

/** What a message carries (interface.md send-message body). */
export interface SendInput {
  readonly content?: string | undefined
  readonly attachments?: ReadonlyArray<{ readonly key: string }> | undefined
  /** Makes a retried send idempotent: the same answer, no second message. */
  readonly client_message_id?: string | undefined
}

/** What the reply stream carries. Ids resume a stream: `<message_id>:<offset>` or `<message_id>:end`. */
export type ReplyItem =
  | { readonly _tag: "Delta"; readonly id: string; readonly message_id: MessageId; readonly index: number; readonly delta: string }
  | { readonly _tag: "Completed"; readonly id: string; readonly message_id: MessageId; readonly content: string }
  | { readonly _tag: "Failed"; readonly id: string; readonly message_id: MessageId; readonly error: string }
  | { readonly _tag: "Heartbeat" }

/** Why a reply ended without completing, as the stream and the history tell it. */
export const failure = {
  cancelled: "cancelled",
  shutdown: "The server stopped before the reply was complete."
} as const

/** The subscription of a reply stream: it is never paused, so there is nothing to resume. */
const unpaused: Subscription = { resume: () => {} }

const resumeId = /^(.+):(\d{1,12}|end)$/

/** Options for a record built here from values already checked: the schema does not check them again. */
const built = { disableValidation: true } as const

/** The first title of a conversation: the start of its first message, or its first file's name. */
const firstTitle = (content: string, attachments: ReadonlyArray<Attachment>) => {
  const text = content.trim().replace(/\s+/g, " ")
  if (text !== "") return graphemeSlice(text, maxTitleLength)
  return graphemeSlice(attachments[0]?.filename ?? "New conversation", maxTitleLength)
}

interface RunningReply {
  readonly conversation: ConversationId
  /** The conversation's owner: the only one who sees the turn's trace. */
  readonly owner: Principal["user"]["id"]
  readonly message_id: MessageId
  /** What arrived so far (ahead of storage by at most one flush interval). */
  content: string
  /** How much of `content` the last write stored. */
  stored: number
  /** Set at the reply's last write: no flush touches it afterwards. */
  ended: boolean
  /** A flush of this reply in flight: the last write waits for it, so that it lands last. */
  flushing: Deferred.Deferred<void> | undefined
  /** The user messages of the conversation before this turn: of two turns' replies, the later one's supersedes. */
  readonly turn: number
  /** Set to stop the reply (a cancel, a later turn); a reply whose fiber is not there yet stops as soon as it is. */
  cancelled: boolean
  fiber?: Fiber.RuntimeFiber<void>
  /** Done once the reply's fiber ended, its last write stored (or given up). */
  readonly done: Deferred.Deferred<void>
}

export class Chat extends Effect.Service<Chat>()("@hosting/core/Chat", {
  scoped: Effect.gen(function*() {
    const conversations = yield* ConversationStore
    const deployments = yield* DeploymentStore
    const files = yield* FileStore
    const runtime = yield* AgentRuntime
    const bus = yield* ReplyBus
    const ids = yield* IdGenerator
    const tx = yield* Transactor
    const config = yield* ChatConfig
    const traces = yield* TraceStore
    const tracing = yield* TracesConfig

    const running = new Map<ConversationId, RunningReply>()

    /** Traces of turns that ended, not stored yet: the flusher writes them together, in one statement. */
    let pendingTraces: Array<TraceRecord> = []
    const writeTraces = Effect.suspend(() => {
      if (pendingTraces.length === 0) return Effect.void
      const batch = pendingTraces
      pendingTraces = []
      return traces.append(batch).pipe(
        Effect.catchAll((e) => Effect.logWarning(`chat: the traces of ${batch.length} turns could not be stored`, e))
      )
    })
    // Registered before the replies' set, so that it runs after they stop at shutdown, with the traces of their ends.
    yield* Effect.addFinalizer(() => writeTraces)
    const replies = yield* FiberSet.make<void>()

    /** This process, as the owner of the leases of the replies it receives: the storage's name for it when it has one. */
    const leaseOwner = yield* Option.match(yield* Effect.serviceOption(LeaseOwner), {
      onSome: (owner) => Effect.succeed(owner.name),
      onNone: () => Effect.map(ids.next, (id) => `chat-${id}`)
    })
    const leaseEnd = Effect.map(DateTime.now, DateTime.addDuration(config.leaseDuration))

    /**
     * Closes replies that will never finish, keeping what arrived: without a
     * time every reply left streaming (a start, when this process owns the
     * storage), else those whose lease ended before it and those of
     * `ownersGone`. Their streams, wherever they are open, learn it from the
     * bus.
     */
    const closeOrphans = (before: Option.Option<DateTime.Utc>, ownersGone: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const closed = yield* conversations.closeStreaming(before, ownersGone)
        yield* Effect.forEach(closed, ({ conversation_id, message }) =>
          bus.publish(conversation_id, { _tag: "Failed", message_id: message.message_id, error: failure.shutdown }))
        if (closed.length > 0) {
          yield* Effect.logWarning(`chat: ${closed.length} replies left streaming by a stopped process were closed as failed`)
        }
      })
    const closeAtStart = closeOrphans(config.sharedStorage ? Option.some(yield* DateTime.now) : Option.none(), [])
    yield* closeAtStart.pipe(Effect.catchAll((e) => Effect.logWarning("chat: closing abandoned replies failed; the next sweep retries", e)))

    const scope = yield* Effect.scope
    // Turns and the last writes of replies that arrive together share a transaction.
    const grouped = GroupCommit.make(tx, scope, { maxSize: 64 })
    // With an event bus, deployments are read once and kept until their accounts change.
    const deploymentById = Option.match(yield* Effect.serviceOption(EventBus), {
      onNone: () => deployments.findById,
      onSome: (events) => DeploymentCache.make(deployments, events, scope, { accounts: 1000, records: 10_000 }).findById
    })

    /**
     * Runs `round` every `interval`, in a fiber of its own, while `busy`
     * holds. The returned effect starts the fiber when none runs; a round
     * that finds nothing to do ends it, so an idle process keeps no timer and
     * a busy one starts it once.
     */
    const whileBusy = (interval: Duration.Duration, busy: () => boolean, round: Effect.Effect<void>) => {
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

    /** Stores a reply's content with a status. */
    const write = (reply: RunningReply, status: MessageStatus) =>
      Effect.suspend(() => {
        reply.stored = reply.content.length
        return Effect.flatMap(DateTime.now, (now) => grouped.run(conversations.updateMessage(reply.message_id, reply.content, status, now)))
      })

    /** The last write of a reply: no flush follows it, and a flush in flight lands before it. */
    const finish = (reply: RunningReply, status: MessageStatus) =>
      Effect.suspend(() => {
        reply.ended = true
        const inFlight = reply.flushing
        return inFlight === undefined ? write(reply, status) : Effect.zipRight(Deferred.await(inFlight), write(reply, status))
      })

    /**
     * Stores what arrived of every reply in flight since its last write, in
     * one write for all of them; a reply that has ended is left to its last
     * write, which waits for this one.
     */
    const flushAll = Effect.suspend(() => {
      const due = [...running.values()].filter((reply) => !reply.ended && reply.content.length > reply.stored)
      if (due.length === 0) return Effect.void
      return Effect.flatMap(Deferred.make<void>(), (done) =>
        Effect.suspend(() => {
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
            Effect.ensuring(Effect.suspend(() => {
              for (const reply of due) {
                if (reply.flushing === done) reply.flushing = undefined
              }
              return Deferred.succeed(done, undefined)
            }))
          )
        }))
    })

    // While replies are in flight here, one fiber stores what arrived of each every flush interval
    // (a reply that ends sooner is written once, at its end) and the traces of the turns that ended...
    const keepFlushing = whileBusy(
      config.flushInterval,
      () => running.size > 0 || pendingTraces.length > 0,
      flushAll.pipe(Effect.zipRight(writeTraces))
    )
    // ... and one renews their leases every third of a lease.
    const leaseThird = Duration.divide(config.leaseDuration, 3).pipe(Option.getOrElse(() => config.leaseDuration))
    const keepRenewing = whileBusy(
      leaseThird,
      () => running.size > 0,
      Effect.flatMap(leaseEnd, (until) => conversations.renewLeases(leaseOwner, until)).pipe(
        Effect.catchAll((e) => Effect.logWarning("chat: renewing reply leases failed; the next round retries", e))
      )
    )
    /** When each owner that the storage reports gone was first reported so (never this process: it knows it lives). */
    const goneSince = new Map<string, number>()
    let nextLeaseSweep = 0
    /**
     * A sweep of shared storage, every `sweepInterval`: it closes the
     * replies of an owner that the storage has reported gone for `deadAfter`
     * (a live process whose connection dropped takes its lock again sooner),
     * and, every third of a lease, those whose lease ended (a process alive
     * but stuck, or a storage that cannot tell a dead one).
     */
    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const gone = new Set((yield* conversations.goneOwners).filter((owner) => owner !== leaseOwner))
      for (const owner of goneSince.keys()) if (!gone.has(owner)) goneSince.delete(owner)
      for (const owner of gone) if (!goneSince.has(owner)) goneSince.set(owner, now)
      const dead = [...goneSince].flatMap(([owner, since]) => now - since >= Duration.toMillis(deadAfter) ? [owner] : [])
      if (dead.length === 0 && now < nextLeaseSweep) return
      nextLeaseSweep = now + Duration.toMillis(leaseThird)
      yield* closeOrphans(Option.some(yield* DateTime.now), dead)
    }).pipe(Effect.catchAll((e) => Effect.logWarning("chat: closing abandoned replies failed; the next sweep retries", e)))
    if (config.sharedStorage) {
      yield* sweep.pipe(Effect.repeat(Schedule.spaced(Duration.min(leaseThird, sweepInterval))), Effect.forkScoped)
    }

    /** The deployment, for a member of the deploying account. */
    const deploymentOf = (principal: Principal, id: DeploymentId) =>
      Effect.gen(function*() {
        const deployment = yield* deploymentById(id).pipe(orFail(() => new DeploymentNotFound({ deployment: id })))
        const refused = Policy.chatRefusal(principal, deployment)
        if (Option.isSome(refused)) return yield* refused.value
        return deployment
      })

    /**
     * The owner and deployment of conversations seen lately (at most
     * `maxKnownOwners`, the oldest forgotten first): neither ever changes,
     * and a conversation is never removed, so what is known stays true on
     * every process.
     */
    const knownOwners = new Map<ConversationId, { readonly owner: UserId; readonly deployment: DeploymentId }>()
    const knowOwner = (id: ConversationId, owner: UserId, deployment: DeploymentId) => {
      knownOwners.delete(id)
      if (knownOwners.size >= maxKnownOwners) knownOwners.delete(knownOwners.keys().next().value!)
      knownOwners.set(id, { owner, deployment })
    }

    /** A conversation of the caller on the deployment; anything else is not found. */
    const ownConversation = (principal: Principal, deploymentId: DeploymentId, id: ConversationId) =>
      conversations.find(id).pipe(
        Effect.tap((found) => Option.isSome(found) && knowOwner(id, found.value.owner_id, found.value.deployment_id)),
        Effect.map(Option.filter((c) => Policy.owns(principal, c.owner_id) && c.deployment_id === deploymentId)),
        orFail(() => new ConversationNotFound({ conversation: id }))
      )

    /** `ownConversation` for a caller that needs no more than the answer: known owners are not read again. */
    const requireOwnConversation = (principal: Principal, deploymentId: DeploymentId, id: ConversationId) =>
      Effect.suspend(() => {
        const known = knownOwners.get(id)
        if (known === undefined) return Effect.asVoid(ownConversation(principal, deploymentId, id))
        return Policy.owns(principal, known.owner) && known.deployment === deploymentId
          ? Effect.void
          : Effect.fail(new ConversationNotFound({ conversation: id }))
      })

    const summary = (c: ConversationRecord) =>
      // A view of a stored record, checked on the way in and encoded by the HTTP layer with its schema.
      new ConversationSummary({
        conversation_id: c.id,
        title: c.title,
        updated_at: c.updated_at,
        assistant_streaming: c.assistant_streaming
      }, { disableValidation: true })

    /** The caller's conversations on a deployment, most recent first. */
    const list = Tracing.fn("Chat.list")(function*(principal: Principal, deploymentId: DeploymentId) {
      yield* deploymentOf(principal, deploymentId)
      return (yield* conversations.listFor(deploymentId, principal.user.id)).map(summary)
    })

    /** Sets the title; idempotent; never creates a conversation. */
    const setTitle = Tracing.fn("Chat.setTitle")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      id: ConversationId,
      title: string
    ) {
      yield* deploymentOf(principal, deploymentId)
      if (title.trim() === "" || graphemeLength(title, maxTitleLength) > maxTitleLength) {
        return yield* new InvalidRequest({ details: `title: must be 1 to ${maxTitleLength} characters and not blank` })
      }
      const conversation = yield* ownConversation(principal, deploymentId, id)
      if (conversation.title !== title) yield* conversations.setTitle(id, title, yield* DateTime.now)
      return { conversation_id: id, title }
    })

    const publish = (conversation: ConversationId, event: ReplyEvent) => bus.publish(conversation, event)

    /**
     * Records the trace of one agent turn (name `chat`): `ok` when the reply
     * completed or was cancelled by the user, `error` when it failed. It is
     * stored with the next flush.
     */
    const recordTurn = (deployment: DeploymentRecord, turn: Message, reply: RunningReply, startNanos: bigint, status: TraceStatus) =>
      Effect.gen(function*() {
        if (!tracing.enabled) return
        const end = yield* Clock.currentTimeNanos
        const attachments = turn.attachments.map((a) => `[${a.filename}]`).join(" ")
        pendingTraces.push(
          new TraceRecord({
            publisher_id: deployment.publisher_id,
            agent_name: deployment.agent_name,
            account_id: deployment.account_id,
            owner_id: Option.some(reply.owner),
            trace_id: newTraceId(),
            name: "chat",
            status,
            latency_ms: latencyMs(startNanos, end),
            input: truncate(attachments === "" ? turn.content : `${turn.content} ${attachments}`.trim()),
            output: truncate(reply.content),
            timestamp: timeOfNanos(startNanos)
          }, built)
        )
        yield* keepFlushing
      })

    /** Runs one reply: streams from the agent, publishes every chunk, stores it at the end (the flusher stores it meanwhile). */
    const runReply = (reply: RunningReply, deployment: DeploymentRecord, history: ReadonlyArray<Message>, turn: Message) => {
      let outcome: TraceStatus = "error"
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
        bus.unsafePublish(reply.conversation, { _tag: "Delta", message_id: reply.message_id, offset, delta: chunk })
      }
      const agentTurn = { deployment, history, message: turn }
      const stream = runtime.replyEach !== undefined
        ? runtime.replyEach(agentTurn, delta)
        : forEachChunk(runtime.reply(agentTurn), (chunks) => Effect.sync(() => Chunk.forEach(chunks, delta)))
      // A cancel taken by another process arrives on the bus; this process stops the reply itself.
      const cancelRequests = Effect.gen(function*() {
        const requests = yield* bus.subscribe(reply.conversation)
        while (true) {
          const event = yield* requests.take
          if (event._tag === "CancelRequested" && event.message_id === reply.message_id) break
        }
        reply.cancelled = true
        if (reply.fiber !== undefined) yield* Fiber.interruptFork(reply.fiber)
      })
      const receive = Effect.gen(function*() {
        yield* stream
        yield* finish(reply, "complete")
        outcome = "ok"
        yield* publish(reply.conversation, { _tag: "Completed", message_id: reply.message_id, content: reply.content })
      })
      const listening = config.sharedStorage
        ? Effect.scoped(Effect.zipRight(Effect.forkScoped(Effect.scoped(cancelRequests)), receive))
        : receive
      // Only the agent's part is interruptible: the fiber starts uninterruptible with its ending in place, so a
      // stop that comes before its first step still stores the reply's end.
      return Effect.interruptible(listening).pipe(
        Effect.catchAll((error: AgentError | StorageError) =>
          end("failed", error._tag === "AgentError" ? error.message : "The reply could not be stored.")
        ),
        Effect.onInterrupt(() => {
          if (reply.cancelled) outcome = "ok"
          return reply.cancelled ? end("cancelled", failure.cancelled) : end("failed", failure.shutdown)
        }),
        Effect.ensuring(Effect.suspend(() => {
          if (running.get(reply.conversation) === reply) running.delete(reply.conversation)
          return Deferred.succeed(reply.done, undefined)
        })),
        (run) =>
          Effect.flatMap(Clock.currentTimeNanos, (startNanos) =>
            run.pipe(Effect.ensuring(Effect.suspend(() => recordTurn(deployment, turn, reply, startNanos, outcome))))),
        Effect.uninterruptible
      )
    }

    /** Asks a reply to stop; its fiber stores it as cancelled with what arrived. One not started yet stops once it is. */
    const stop = (reply: RunningReply) =>
      Effect.suspend(() => {
        reply.cancelled = true
        return reply.fiber === undefined ? Effect.void : Fiber.interruptFork(reply.fiber)
      })

    /** Stops the reply in flight of a conversation, if any, once it is stored as cancelled. */
    const stopReply = (conversation: ConversationId) =>
      Effect.suspend(() => {
        const reply = running.get(conversation)
        if (reply === undefined) return Effect.succeed(Option.none<MessageId>())
        return stop(reply).pipe(Effect.zipRight(Deferred.await(reply.done)), Effect.as(Option.some(reply.message_id)))
      })

    /**
     * Starts the reply of a stored turn, in the conversation's order: it
     * supersedes the reply of an earlier turn still in flight, which is
     * stopped (and awaited, so that the answer to the send finds it stored
     * as cancelled), and a later turn's reply that started first supersedes
     * it. Turns stored together resume in any order; whichever starts its
     * reply first, only the reply of the conversation's last turn runs on.
     */
    const startReply = (reply: RunningReply, run: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const previous = running.get(reply.conversation)
        const superseded = previous !== undefined && previous.turn > reply.turn
        if (superseded || starting.get(reply.conversation)?.cancelled.has(reply.message_id) === true) reply.cancelled = true
        if (!superseded) running.set(reply.conversation, reply)
        yield* keepRenewing
        yield* keepFlushing
        // Forked where nothing interrupts (the fiber starts uninterruptible, see runReply); a stop asked
        // for before the fiber was there takes effect now.
        reply.fiber = yield* Effect.uninterruptible(FiberSet.run(replies, run))
        if (reply.cancelled) yield* Fiber.interruptFork(reply.fiber)
        if (!superseded && previous !== undefined) {
          yield* stop(previous)
          yield* Deferred.await(previous.done)
        }
      })

    /**
     * The turns of each conversation between the start of their storage and
     * the start of their reply, and the replies that a cancel asked to stop
     * meanwhile: such a cancel finds the reply stored but not running yet,
     * and the reply stops as soon as it starts.
     */
    const starting = new Map<ConversationId, { turns: number; readonly cancelled: Set<MessageId> }>()

    /** Stores a turn (in a transaction shared with the turns sent at the same time) and starts its reply. */
    const storeTurn = (
      principal: Principal,
      deployment: DeploymentRecord,
      conversationId: ConversationId,
      content: string,
      attached: ReadonlyArray<Attachment>,
      input: SendInput
    ) => Effect.suspend(() => {
      const entry = starting.get(conversationId) ?? { turns: 0, cancelled: new Set<MessageId>() }
      entry.turns++
      starting.set(conversationId, entry)
      return Effect.gen(function*() {
        const deploymentId = deployment.id
        const outcome = yield* grouped.run(Effect.gen(function*() {
          const now = yield* DateTime.now
          // Built of checked values (the request's, the file store's, the clock's): not checked again.
          const message = new Message({
            message_id: MessageId.make(`msg-${yield* ids.next}`),
            role: "user",
            content,
            attachments: attached,
            timestamp: now,
            status: "complete"
          }, built)
          const reply = new Message({
            message_id: MessageId.make(`msg-${yield* ids.next}`),
            role: "assistant",
            content: "",
            attachments: [],
            timestamp: now,
            status: "streaming"
          }, built)
          // Creates the conversation on the first send and holds it until commit: concurrent sends take turns.
          const turn = yield* conversations.startTurn({
            conversation_id: conversationId,
            deployment_id: deploymentId,
            owner_id: principal.user.id,
            title: firstTitle(content, attached),
            message,
            client_message_id: Option.fromNullable(input.client_message_id),
            reply,
            lease: { owner: leaseOwner, expires_at: yield* leaseEnd },
            message_limit: config.messageLimit
          })
          // Refusals are answers, not failures: a failure would roll back the other turns of the group.
          if (turn._tag !== "Started") return turn
          // A conversation without a user turn yet has no history: no need to read it.
          const history = turn.user_messages === 0 ? [] : yield* conversations.messages(conversationId)
          return { _tag: "Started" as const, message, reply, history, turn: turn.user_messages }
        }))
        switch (outcome._tag) {
          case "NotOwner":
            return yield* new ConversationNotFound({ conversation: conversationId })
          case "LimitReached":
            return yield* new MessageLimitReached({ limit: config.messageLimit })
        }
        // Committed: the conversation is the caller's on this deployment, for good.
        knowOwner(conversationId, principal.user.id, deploymentId)
        if (outcome._tag === "Started") {
          const reply: RunningReply = {
            conversation: conversationId,
            owner: principal.user.id,
            message_id: outcome.reply.message_id,
            content: "",
            stored: 0,
            ended: false,
            flushing: undefined,
            turn: outcome.turn,
            cancelled: false,
            done: yield* Deferred.make<void>()
          }
          const history = outcome.history.filter((m) => m.message_id !== outcome.reply.message_id && m.message_id !== outcome.message.message_id)
          yield* startReply(reply, runReply(reply, deployment, history, outcome.message))
        }
        return { message_id: outcome.message.message_id, timestamp: outcome.message.timestamp }
      }).pipe(Effect.ensuring(Effect.sync(() => {
        if (--entry.turns === 0) starting.delete(conversationId)
      })))
    })

    /**
     * Sends a user message (interface.md send-message rules 1-7): stores the
     * user turn and an empty streaming reply in one transaction, then starts
     * the reply in the background and answers at once.
     */
    const send = Tracing.fn("Chat.send")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      conversationId: ConversationId,
      input: SendInput
    ) {
      const deployment = yield* deploymentOf(principal, deploymentId)
      const content = input.content ?? ""
      const keys = [...new Set((input.attachments ?? []).map((a) => a.key))]
      if (content.trim() === "" && keys.length === 0) {
        return yield* new InvalidRequest({ details: "A message needs content or at least one attachment." })
      }
      if (keys.length > config.maxAttachments) {
        return yield* new TooManyAttachments({ count: keys.length, limit: config.maxAttachments })
      }
      // The authoritative metadata: a key the caller sends is only a reference.
      const attached = yield* Effect.forEach(keys, (key) =>
        files.find(deploymentId, key).pipe(
          Effect.map(Option.filter((f) => Policy.owns(principal, f.owner_id) && f.status === "ready")),
          orFail(() => new AttachmentInvalid({ key })),
          Effect.map((f) => new Attachment({ key: f.key, filename: f.filename }))
        ))
      // From here the turn is not interrupted (a client that goes away): once stored, its reply starts.
      return yield* Effect.uninterruptible(storeTurn(principal, deployment, conversationId, content, attached, input))
    })

    /**
     * Stops the reply in flight. When another process is receiving it (shared
     * storage), the request goes to that process over the bus and the reply
     * ends as cancelled there.
     */
    const cancel = Tracing.fn("Chat.cancel")(function*(principal: Principal, deploymentId: DeploymentId, id: ConversationId) {
      yield* deploymentOf(principal, deploymentId)
      yield* requireOwnConversation(principal, deploymentId, id)
      const stopped = yield* stopReply(id)
      if (Option.isSome(stopped)) return { status: "cancelled" as const, message_id: stopped.value }
      const latest = yield* conversations.latestReply(id)
      if (Option.isSome(latest) && latest.value.status === "streaming") {
        const messageId = latest.value.message_id
        const here = running.get(id)
        if (here?.message_id === messageId) {
          // It started here meanwhile.
          yield* stop(here)
          yield* Deferred.await(here.done)
        } else {
          // About to start here (stored, not running yet), or received by another process.
          starting.get(id)?.cancelled.add(messageId)
          yield* bus.publish(id, { _tag: "CancelRequested", message_id: messageId })
        }
        return { status: "cancelled" as const, message_id: messageId }
      }
      return { status: "idle" as const, message_id: null }
    })

    /** The newest state of a message: a running reply's content is ahead of storage. */
    const current = (message: Message, conversation: ConversationId) => {
      const reply = running.get(conversation)
      return reply !== undefined && reply.message_id === message.message_id
        ? new Message({ ...message, content: reply.content, status: "streaming" })
        : message
    }

    /** Every message of the caller's conversation, oldest first. */
    const history = Tracing.fn("Chat.history")(function*(principal: Principal, deploymentId: DeploymentId, id: ConversationId) {
      yield* deploymentOf(principal, deploymentId)
      yield* requireOwnConversation(principal, deploymentId, id)
      return (yield* conversations.messages(id)).map((m) => current(m, id))
    })

    /** The heartbeat of reply streams: one array for all, and one timer. */
    const heartbeat: ReadonlyArray<ReplyItem> = [{ _tag: "Heartbeat" }]
    const heartbeats = Heartbeats.make(config.heartbeat, scope)
    /** The receivers of open reply streams, ended when the service stops. */
    const receivers = new Set<Receiver<ReplyItem>>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const receiver of receivers) receiver.end()
      })
    )

    /** Follows a conversation the caller was checked to own (see `follow`). */
    const open = (id: ConversationId, lastEventId: Option.Option<string>, receiver: Receiver<ReplyItem>) =>
      Effect.gen(function*() {
        const streamScope = yield* Effect.scope
        /**
         * The bus's events in order, each as it is published; while the
         * snapshot is read and sent, or a gap is filled from storage, they
         * wait in `waiting` (undefined once the stream is live).
         */
        let waiting: Array<ReplyEvent> | undefined = []
        let deliver: (event: ReplyEvent) => void = () => {}
        // Listen before the snapshot, so that nothing falls between them.
        yield* bus.listen(id, (event) => {
          if (waiting !== undefined) waiting.push(event)
          else deliver(event)
        })
      const latest = Option.map(yield* conversations.latestReply(id), (m) => current(m, id))
      const resume = Option.flatMap(lastEventId, (raw) => Option.fromNullable(resumeId.exec(raw)))
      const sent = new Map<string, { offset: number; ended: boolean }>()
      const head: Array<ReplyItem> = []
      if (Option.isSome(latest)) {
        const message = latest.value
        const from = Option.match(resume, {
          onNone: () => 0,
          onSome: (m) => (m[1] === message.message_id ? (m[2] === "end" ? "end" as const : Number(m[2])) : 0)
        })
        if (from !== "end") {
          if (message.content.length > from) {
            head.push({
              _tag: "Delta",
              id: `${message.message_id}:${message.content.length}`,
              message_id: message.message_id,
              index: from,
              delta: message.content.slice(from)
            })
          }
          if (message.status === "complete") {
            head.push({ _tag: "Completed", id: `${message.message_id}:end`, message_id: message.message_id, content: message.content })
          } else if (message.status !== "streaming") {
            head.push({
              _tag: "Failed",
              id: `${message.message_id}:end`,
              message_id: message.message_id,
              error: message.status === "cancelled" ? failure.cancelled : failure.shutdown
            })
          }
        }
        sent.set(message.message_id, {
          offset: Math.max(message.content.length, from === "end" ? 0 : from),
          ended: from === "end" || message.status !== "streaming"
        })
      }
      /**
       * The stored content of a reply from `from` to `to`, waiting (a few
       * flush intervals at most) for storage to catch up. Needed when
       * another process receives the reply: the snapshot read from storage
       * may lag the first chunk this stream hears of.
       */
      const missing = (messageId: MessageId, from: number, to: number) =>
        Effect.gen(function*() {
          for (let attempt = 0; attempt < 10; attempt++) {
            const stored = yield* conversations.latestReply(id)
            if (Option.isSome(stored) && stored.value.message_id === messageId && stored.value.content.length >= to) {
              return Option.some(stored.value.content.slice(from, to))
            }
            yield* Effect.sleep(config.flushInterval)
          }
          return Option.none<string>()
        })
      /** A delta item of the stream: `text` at `index`, the reply's content reaching `end`. */
      const deltaItem = (messageId: MessageId, end: number, index: number, text: string): ReadonlyArray<ReplyItem> => [
        { _tag: "Delta", id: `${messageId}:${end}`, message_id: messageId, index, delta: text }
      ]
      /** The items of an event; undefined for a delta that starts past what this stream sent (a gap `fill` reads). */
      const translateNow = (event: ReplyEvent): ReadonlyArray<ReplyItem> | undefined => {
        if (event._tag === "CancelRequested") return []
        const state = sent.get(event.message_id) ?? { offset: 0, ended: false }
        sent.set(event.message_id, state)
        if (state.ended) return []
        switch (event._tag) {
          case "Delta": {
            const end = event.offset + event.delta.length
            if (end <= state.offset) return []
            if (event.offset > state.offset) return undefined
            const start = state.offset
            state.offset = end
            return deltaItem(event.message_id, end, start, event.delta.slice(start - event.offset))
          }
          case "Completed":
            state.ended = true
            return [{ _tag: "Completed", id: `${event.message_id}:end`, message_id: event.message_id, content: event.content }]
          case "Failed":
            state.ended = true
            return [{ _tag: "Failed", id: `${event.message_id}:end`, message_id: event.message_id, error: event.error }]
        }
      }
      /** The items of an event, the text of a gap read from storage first. */
      const translate = (event: ReplyEvent): Effect.Effect<ReadonlyArray<ReplyItem>, StorageError> =>
        Effect.suspend(() => {
          const now = translateNow(event)
          if (now !== undefined || event._tag !== "Delta") return Effect.succeed(now ?? [])
          const state = sent.get(event.message_id)!
          return Effect.flatMap(missing(event.message_id, state.offset, event.offset), (gap) => {
            const from = state.offset
            const end = event.offset + event.delta.length
            state.offset = end
            return Option.isSome(gap)
              ? Effect.succeed(deltaItem(event.message_id, end, from, gap.value + event.delta))
              : Effect.as(
                Effect.logWarning(`chat: reply ${event.message_id} skipped from ${from} to ${event.offset} on a stream`),
                deltaItem(event.message_id, end, event.offset, event.delta)
              )
          })
        })
        if (head.length > 0) receiver.push(head)
        // Delivers the waiting events, in order, then lets the stream go live; a storage failure ends the stream (the client resumes).
        const fill: Effect.Effect<void> = Effect.gen(function*() {
          while (waiting !== undefined && waiting.length > 0) {
            const items = yield* translate(waiting.shift()!)
            if (items.length > 0) receiver.push(items)
          }
          waiting = undefined
        }).pipe(
          Effect.catchAll((error) => Effect.zipRight(Effect.logError("chat: a reply stream failed", error), Effect.sync(() => receiver.end())))
        )
        // A fill runs in a fiber of the stream's scope (interrupted when it closes), made only when a gap needs one.
        const runtime = yield* Effect.runtime<never>()
        const run = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(Effect.forkIn(effect, streamScope))
        deliver = (event) => {
          const items = translateNow(event)
          if (items === undefined) {
            waiting = [event]
            run(fill)
          } else if (items.length > 0) receiver.push(items)
        }
        if (waiting.length > 0) run(fill)
        else waiting = undefined
        const beating = Heartbeats.beating(() => receiver.push(heartbeat))
        receivers.add(receiver)
        yield* heartbeats.add(beating)
        yield* Scope.addFinalizer(streamScope, Effect.sync(() => {
          heartbeats.remove(beating)
          receivers.delete(receiver)
        }))
        return unpaused
      })

    /**
     * Follows the replies of the caller's conversation until the scope
     * closes. Opened while a reply streams, the receiver gets what arrived
     * so far as one delta, then every chunk; opened after, the latest reply
     * and its end. `lastEventId` resumes after the event with that id. A
     * heartbeat comes every interval; the receiver is ended when the service
     * stops. A reply is bounded, so a receiver's request for a pause is not
     * needed: it is given everything.
     */
    const follow = Tracing.fn("Chat.follow")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      id: ConversationId,
      lastEventId: Option.Option<string>,
      receiver: Receiver<ReplyItem>
    ) {
      yield* deploymentOf(principal, deploymentId)
      yield* requireOwnConversation(principal, deploymentId, id)
      return yield* open(id, lastEventId, receiver)
    })

    /** The reply stream of a conversation (`follow` as a `Stream`). */
    const stream = Tracing.fn("Chat.stream")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      id: ConversationId,
      lastEventId: Option.Option<string>
    ) {
      yield* deploymentOf(principal, deploymentId)
      yield* requireOwnConversation(principal, deploymentId, id)
      return toStream((receiver: Receiver<ReplyItem>) => open(id, lastEventId, receiver))
    })

    return { list, setTitle, send, cancel, history, follow, stream } as const
  })
}) {}
