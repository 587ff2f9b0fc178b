/**
 * Use-case tests of the account event stream, on the test clock.
 */
import { describe, expect, it } from "@effect/vitest"
import { EventBus, Events, Ids, Ports } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { DateTime, Effect, Fiber, Option, Queue, Stream, TestClock } from "effect"

const follow = (team: Seed.Team, lastEventId: Option.Option<string> = Option.none()) =>
  Effect.gen(function*() {
    const events = yield* Events.Events
    const items = Events.stream(events, team.principals.member, team.account, lastEventId)
    const queue = yield* Queue.unbounded<Events.StreamItem>()
    yield* Stream.runForEach(items, (item) => Queue.offer(queue, item)).pipe(Effect.forkScoped)
    return queue
  })

const appendDirect = (team: Seed.Team, data: Record<string, unknown>) =>
  Effect.gen(function*() {
    const accounts = yield* Ports.AccountStore
    const account = Option.getOrThrow(yield* accounts.findByName(team.account))
    const log = yield* Ports.EventLog
    return yield* log.append([{ account_id: account.id, type: "agent.build", data }], yield* DateTime.now)
  })

/** Appends to the log and wakes the account's streams, as a use case that commits events does. */
const appendAndWake = (team: Seed.Team, data: Record<string, unknown>) =>
  Effect.gen(function*() {
    const stored = yield* appendDirect(team, data)
    const bus = yield* EventBus.EventBus
    yield* bus.publish(stored.map((event) => event.account_id))
    return stored
  })

/** Lets the service's fibers run what is ready (the test clock does not move). */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("Events", () => {
  it.layer(TestServices.make({ heartbeat: "25 seconds", replayCap: 2 }))((it) => {
    it.scoped("heartbeat comes every heartbeat interval (25 seconds by default), after ready", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const queue = yield* follow(team)
        expect(yield* Queue.take(queue)).toEqual({ _tag: "Ready", resync: false })
        yield* TestClock.adjust("24 seconds")
        expect(yield* Queue.size(queue)).toBe(0)
        yield* TestClock.adjust("1 second")
        expect(yield* Queue.take(queue)).toEqual({ _tag: "Heartbeat" })
        yield* TestClock.adjust("25 seconds")
        expect(yield* Queue.take(queue)).toEqual({ _tag: "Heartbeat" })
      }))

    it.scoped("an event whose wake-up signal was lost is still delivered within one heartbeat interval", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const queue = yield* follow(team)
        yield* Queue.take(queue)
        const [stored] = yield* appendDirect(team, { agent: "x/y", status: "silent" })
        yield* TestClock.adjust("25 seconds")
        const items = [yield* Queue.take(queue), yield* Queue.take(queue)]
        expect(items).toContainEqual({ _tag: "Event", event: stored })
      }))

    it.scoped("resuming from an id older than what retention kept gives resync true", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* TestClock.setTime(Date.parse("2026-01-01T00:00:00Z"))
        const [old] = yield* appendDirect(team, { n: 1 })
        yield* appendDirect(team, { n: 2 })
        yield* TestClock.setTime(Date.parse("2026-03-01T00:00:00Z"))
        const [kept] = yield* appendDirect(team, { n: 3 })
        const events = yield* Events.Events
        expect(yield* events.prune()).toBeGreaterThanOrEqual(2)
        const queue = yield* follow(team, Option.some(old!.id))
        expect(yield* Queue.take(queue)).toEqual({ _tag: "Ready", resync: true })
        expect(yield* Queue.take(queue)).toEqual({ _tag: "Event", event: kept })
      }))

    it.scoped("a new connection without an id starts live: no replay, resync false", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* appendDirect(team, { n: 1 })
        const queue = yield* follow(team)
        expect(yield* Queue.take(queue)).toEqual({ _tag: "Ready", resync: false })
        expect(yield* Queue.size(queue)).toBe(0)
      }))

    it.scoped("a closed stream releases its subscription", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const events = yield* Events.Events
        const bus = yield* EventBus.EventBus
        const before = yield* bus.subscribers
        const items = Events.stream(events, team.principals.member, team.account, Option.none())
        const fiber = yield* Stream.runDrain(items).pipe(Effect.fork)
        yield* TestClock.adjust("1 millis")
        expect(yield* bus.subscribers).toBe(before + 1)
        yield* Fiber.interrupt(fiber)
        expect(yield* bus.subscribers).toBe(before)
      }))

    it.scoped("a receiver that asks for a pause is given nothing until it resumes, then everything it missed, in order", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const events = yield* Events.Events
        const received: Array<Events.StreamItem> = []
        let accepting = false
        const subscription = yield* events.follow(team.principals.member, team.account, Option.none(), {
          push: (items) => {
            received.push(...items)
            return accepting
          },
          end: () => {}
        })
        expect(received).toEqual([{ _tag: "Ready", resync: false }])
        const missed = [...yield* appendAndWake(team, { n: 1 }), ...yield* appendAndWake(team, { n: 2 })]
        yield* settle
        expect(received).toHaveLength(1)
        accepting = true
        subscription.resume()
        yield* settle
        expect(received.slice(1)).toEqual(missed.map((event) => ({ _tag: "Event", event })))
        const [later] = yield* appendAndWake(team, { n: 3 })
        yield* settle
        expect(received.slice(1)).toEqual([...missed, later].map((event) => ({ _tag: "Event", event })))
      }))

    it.scoped("streams at the same place get the same events once each; one that joins later starts from its own place", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const events = yield* Events.Events
        const follower = () => {
          const received: Array<Events.StreamItem> = []
          return { received, receiver: { push: (items: ReadonlyArray<Events.StreamItem>) => (received.push(...items), true), end: () => {} } }
        }
        const [a, b] = [follower(), follower()]
        yield* events.follow(team.principals.member, team.account, Option.none(), a.receiver)
        yield* events.follow(team.principals.member, team.account, Option.none(), b.receiver)
        const [first] = yield* appendAndWake(team, { n: 1 })
        yield* settle
        const c = follower()
        yield* events.follow(team.principals.member, team.account, Option.none(), c.receiver)
        const [second] = yield* appendAndWake(team, { n: 2 })
        yield* settle
        const both = [first, second].map((event) => ({ _tag: "Event", event }))
        expect(a.received.slice(1)).toEqual(both)
        expect(b.received.slice(1)).toEqual(both)
        expect(c.received).toEqual([{ _tag: "Ready", resync: false }, { _tag: "Event", event: second }])
      }))

    it.effect("only members may follow an account; an unknown account is refused the same way", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const events = yield* Events.Events
        const denied = yield* Effect.flip(Stream.runDrain(Events.stream(events, team.principals.outsider, team.account, Option.none())))
        expect(denied._tag).toBe("PermissionDenied")
        const unknown = yield* Effect.flip(
          Stream.runDrain(Events.stream(events, team.principals.member, Ids.AccountName.make("nobody-here"), Option.none()))
        )
        expect(unknown._tag).toBe("PermissionDenied")
      }))
  })
})
