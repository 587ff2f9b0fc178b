/**
 * The leases of the replies a process receives: its name as their owner,
 * their renewal while replies are in flight, and the closing of replies
 * that will never finish (left streaming by a process that stopped, or
 * whose lease ended), at start and, on shared storage, by a sweep.
 */
import { Clock, DateTime, Duration, Effect, Option, Schedule } from "effect"
import { whileBusy } from "../../internal/whileBusy.js"
import { ConversationStore, IdGenerator, LeaseOwner } from "../../ports/Ports.js"
import { ReplyBus } from "../../ports/ReplyBus.js"
import { ChatConfig, failure } from "./ChatConfig.js"
import * as Steps from "../../runtime/Steps.js"

/** How often a process sweeps shared storage for replies whose process died. */
const sweepInterval = Duration.millis(250)
/** How long the storage must report a lease owner gone before its replies are closed. */
const deadAfter = Duration.millis(500)

/**
 * Closes what a stopped process left and, on shared storage, sweeps for
 * more for the life of the scope; `busy` tells whether replies are in
 * flight here (their leases are renewed meanwhile).
 */
export const make = (busy: () => boolean) =>
  Effect.gen(function*() {
    const conversations = yield* ConversationStore
    const bus = yield* ReplyBus
    const ids = yield* IdGenerator
    const config = yield* ChatConfig
    const scope = yield* Effect.scope

    /** This process, as the owner of the leases of the replies it receives: the storage's name for it when it has one. */
    const owner = yield* Option.match(yield* Effect.serviceOption(LeaseOwner), {
      onSome: (owner) => Effect.succeed(owner.name),
      onNone: () => Effect.map(ids.next, (id) => `chat-${id}`)
    })
    /** When a lease taken now ends. */
    const end = Steps.withNow((now) => Effect.succeed(DateTime.addDuration(now, config.leaseDuration)))

    /**
     * Closes replies that will never finish, keeping what arrived: without a
     * time every reply left streaming (a start, when this process owns the
     * storage), else those whose lease ended before it and those of
     * `ownersGone`. Their streams, wherever they are open, learn it from the
     * bus.
     */
    const closeOrphans = Effect.fnUntraced(function*(before: Option.Option<DateTime.Utc>, ownersGone: ReadonlyArray<string>) {
      const closed = yield* conversations.closeStreaming(before, ownersGone)
      for (const { conversation_id, message } of closed) {
        bus.publish(conversation_id, { _tag: "Failed", message_id: message.message_id, error: failure.shutdown })
      }
      if (closed.length > 0) {
        yield* Effect.logWarning(`chat: ${closed.length} replies left streaming by a stopped process were closed as failed`)
      }
    })
    const closeAtStart = closeOrphans(config.sharedStorage ? Option.some(yield* DateTime.now) : Option.none(), [])
    yield* closeAtStart.pipe(Effect.catchAll((e) => Effect.logWarning("chat: closing abandoned replies failed; the next sweep retries", e)))

    // While replies are in flight here, one fiber renews their leases every third of a lease.
    const leaseThird = Duration.divide(config.leaseDuration, 3).pipe(Option.getOrElse(() => config.leaseDuration))
    const keepRenewing = whileBusy(
      scope,
      leaseThird,
      busy,
      Effect.flatMap(end, (until) => conversations.renewLeases(owner, until)).pipe(
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
      const gone = new Set((yield* conversations.goneOwners).filter((name) => name !== owner))
      for (const name of goneSince.keys()) if (!gone.has(name)) goneSince.delete(name)
      for (const name of gone) if (!goneSince.has(name)) goneSince.set(name, now)
      const dead = [...goneSince].flatMap(([name, since]) => now - since >= Duration.toMillis(deadAfter) ? [name] : [])
      if (dead.length === 0 && now < nextLeaseSweep) return
      nextLeaseSweep = now + Duration.toMillis(leaseThird)
      yield* closeOrphans(Option.some(yield* DateTime.now), dead)
    }).pipe(Effect.catchAll((e) => Effect.logWarning("chat: closing abandoned replies failed; the next sweep retries", e)))
    if (config.sharedStorage) {
      yield* sweep.pipe(Effect.repeat(Schedule.spaced(Duration.min(leaseThird, sweepInterval))), Effect.forkScoped)
    }

    return { owner, end, keepRenewing } as const
  })
