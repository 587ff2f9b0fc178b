/**
 * The contract of the ReplyBus port; every reply bus runs it with one line.
 * A bus may deliver an event a moment after it was published (one across
 * processes sends it through its database), so the suite waits for what it
 * expects, a few seconds at most. To check that something did not arrive, it
 * publishes a marker after it and waits for the marker: a bus delivers in
 * publication order.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Conversation, ReplyBus } from "@hosting/core"
import { Effect, Exit, type Layer, Scope } from "effect"
import { uniqueName } from "./StorageSuite.js"

type ReplyEvent = ReplyBus.ReplyEvent

const conversation = () => Conversation.ConversationId.make(globalThis.crypto.randomUUID())
const messageId = () => Conversation.MessageId.make(uniqueName("msg"))

const delta = (message_id: Conversation.MessageId, offset: number, text: string): ReplyEvent => ({
  _tag: "Delta",
  message_id,
  offset,
  delta: text
})
const completed = (message_id: Conversation.MessageId, content: string): ReplyEvent => ({ _tag: "Completed", message_id, content })
const cancelRequested = (message_id: Conversation.MessageId): ReplyEvent => ({ _tag: "CancelRequested", message_id })

/** A listener's events so far. */
const listening = (bus: ReplyBus.ReplyBus["Type"], conversation: Conversation.ConversationId) =>
  Effect.suspend(() => {
    const heard: Array<ReplyEvent> = []
    return Effect.as(bus.listen(conversation, (event) => void heard.push(event)), heard)
  })

/** Waits until `heard` holds `count` events or more; fails the test if they do not come within a few seconds. */
const untilHeard = (heard: ReadonlyArray<ReplyEvent>, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && heard.length < count; i++) yield* Effect.sleep("5 millis")
    if (heard.length < count) return yield* Effect.die(new Error(`heard ${heard.length} events, expected ${count}`))
  })

/** Takes the subscription's next `count` events; fails the test if they do not come within a few seconds. */
const takeN = (subscription: { readonly take: Effect.Effect<ReplyEvent> }, count: number) =>
  Effect.replicateEffect(subscription.take, count).pipe(
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error(`${count} events did not come within 5 seconds`) }),
    Effect.orDie
  )

/** Runs the reply bus contract against a layer providing the port. */
export const run = <E>(name: string, layer: Layer.Layer<ReplyBus.ReplyBus, E>) => {
  describe(`reply bus contract: ${name}`, () => {
    withLayer(layer, { timeout: 30_000, excludeTestServices: true })((it) => {
      it.scoped("every listener of the conversation, and every subscription made from listen, gets its events, in the order they were published", () =>
        Effect.gen(function*() {
          const bus = yield* ReplyBus.ReplyBus
          const c = conversation()
          const id = messageId()
          const first = yield* ReplyBus.subscribe(bus, c)
          const second = yield* ReplyBus.subscribe(bus, c)
          const heard = yield* listening(bus, c)
          const events = [delta(id, 0, "Hel"), delta(id, 3, "lo"), delta(id, 5, "!"), completed(id, "Hello!")]
          for (const event of events) bus.publish(c, event)
          expect(yield* takeN(first, 4)).toEqual(events)
          expect(yield* takeN(second, 4)).toEqual(events)
          yield* untilHeard(heard, 4)
          expect(heard).toEqual(events)
        }))

      it.scoped("events published in a burst, from plain code and from effects, arrive in the order they were published", () =>
        Effect.gen(function*() {
          const bus = yield* ReplyBus.ReplyBus
          const c = conversation()
          const id = messageId()
          const heard = yield* listening(bus, c)
          const subscription = yield* ReplyBus.subscribe(bus, c)
          const events = Array.from({ length: 40 }, (_, i) => delta(id, i, String.fromCharCode(97 + (i % 26))))
          for (const [i, event] of events.entries()) {
            if (i % 3 === 0) yield* Effect.sync(() => bus.publish(c, event))
            else bus.publish(c, event)
          }
          yield* untilHeard(heard, events.length)
          expect(heard).toEqual(events)
          expect(yield* takeN(subscription, events.length)).toEqual(events)
        }))

      it.scoped("each kind of event arrives with what it reports: a chunk and its offset, the whole reply, the failure, a request to stop", () =>
        Effect.gen(function*() {
          const bus = yield* ReplyBus.ReplyBus
          const c = conversation()
          const [done, broken] = [messageId(), messageId()]
          const heard = yield* listening(bus, c)
          const events: Array<ReplyEvent> = [
            delta(done, 0, "Ça va, très bien 👍\n\"quoted\" \\ end"),
            completed(done, "Ça va, très bien 👍\n\"quoted\" \\ end"),
            cancelRequested(broken),
            { _tag: "Failed", message_id: broken, error: "The agent stopped answering." }
          ]
          for (const event of events) bus.publish(c, event)
          yield* untilHeard(heard, events.length)
          expect(heard).toEqual(events)
        }))

      it.scoped("a long chunk arrives whole or in parts at their offsets, which join in order into what was published", () =>
        Effect.gen(function*() {
          const bus = yield* ReplyBus.ReplyBus
          const c = conversation()
          const id = messageId()
          const heard = yield* listening(bus, c)
          const text = Array.from({ length: 1200 }, (_, i) => `w${i} é `).join("")
          bus.publish(c, delta(id, 7, text))
          bus.publish(c, cancelRequested(id))
          for (let i = 0; i < 1000 && heard.at(-1)?._tag !== "CancelRequested"; i++) yield* Effect.sleep("5 millis")
          const parts = heard.flatMap((event) => (event._tag === "Delta" ? [event] : []))
          expect(heard.map((event) => event._tag)).toEqual([...parts.map(() => "Delta"), "CancelRequested"])
          expect(parts.map((part) => part.delta).join("")).toBe(text)
          let offset = 7
          for (const part of parts) {
            expect(part.offset).toBe(offset)
            offset += part.delta.length
          }
        }))

      it.scoped("a conversation's events reach only its own subscribers and listeners", () =>
        Effect.gen(function*() {
          const bus = yield* ReplyBus.ReplyBus
          const [mine, other] = [conversation(), conversation()]
          const id = messageId()
          const heard = yield* listening(bus, mine)
          const subscription = yield* ReplyBus.subscribe(bus, mine)
          bus.publish(other, delta(id, 0, "not yours"))
          bus.publish(other, cancelRequested(id))
          bus.publish(mine, completed(id, "yours"))
          expect(yield* takeN(subscription, 1)).toEqual([completed(id, "yours")])
          yield* untilHeard(heard, 1)
          expect(heard).toEqual([completed(id, "yours")])
        }))

      it.scoped("nothing reaches a listener once its scope closes; subscribers counts subscriptions and listeners until theirs close", () =>
        Effect.gen(function*() {
          const bus = yield* ReplyBus.ReplyBus
          const c = conversation()
          const id = messageId()
          const before = yield* bus.subscribers
          const shortLived = yield* Scope.make()
          const closedHeard = yield* Scope.extend(listening(bus, c), shortLived)
          yield* Scope.extend(ReplyBus.subscribe(bus, c), shortLived)
          const staying = yield* listening(bus, c)
          expect(yield* bus.subscribers).toBe(before + 3)
          bus.publish(c, delta(id, 0, "before"))
          yield* untilHeard(closedHeard, 1)
          yield* Scope.close(shortLived, Exit.void)
          expect(yield* bus.subscribers).toBe(before + 1)
          bus.publish(c, delta(id, 6, "after"))
          bus.publish(c, completed(id, "beforeafter"))
          yield* untilHeard(staying, 3)
          expect(closedHeard).toEqual([delta(id, 0, "before")])
        }))
    })
  })
}
