/**
 * A reply stream hears the bus as events are published (no fiber waits for
 * them), and when a delta starts past what the stream has sent (another
 * process received the reply and storage lags), it fills the gap from
 * storage first; events published meanwhile follow in order. A gap storage
 * never fills is skipped with a warning.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { type Chat, Conversation, Ports, ReplyBus } from "@hosting/core"
import { TestServices } from "@hosting/testing"
import { Context, DateTime, Duration, Effect, Layer, Logger, Option } from "effect"
import { chatSetup, newConversation, waitForReply } from "./replies.js"

/** A conversation whose latest reply is `content`, streaming, received by no process here. */
const streamingElsewhere = (content: string) =>
  Effect.gen(function*() {
    const { chat, deployment, team } = yield* chatSetup
    const store = yield* Ports.ConversationStore
    const conversation = newConversation()
    yield* chat.send(team.principals.member, deployment, conversation, { content: "first" })
    yield* waitForReply(conversation)
    const reply = new Conversation.Message({
      message_id: Conversation.MessageId.make(`msg-${globalThis.crypto.randomUUID()}`),
      role: "assistant",
      content,
      attachments: [],
      timestamp: yield* DateTime.now,
      status: "streaming"
    })
    yield* store.append({
      conversation_id: conversation,
      message: reply,
      client_message_id: Option.none(),
      lease: { owner: "another-process", expires_at: DateTime.addDuration(yield* DateTime.now, Duration.hours(1)) }
    })
    // The stream, with every batch it is pushed.
    const items: Array<Chat.ReplyItem> = []
    yield* chat.follow(team.principals.member, deployment, conversation, Option.none(), {
      push: (batch) => {
        items.push(...batch)
        return true
      },
      end: () => {}
    })
    return { conversation, id: reply.message_id, items, store, bus: yield* ReplyBus.ReplyBus }
  })

const deltas = (items: ReadonlyArray<Chat.ReplyItem>) =>
  items.flatMap((item) => item._tag === "Delta" ? [[item.index, item.delta]] : item._tag === "Completed" ? [["end", item.content]] : [])

const settle = (items: ReadonlyArray<Chat.ReplyItem>, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 300 && deltas(items).length < count; i++) yield* Effect.sleep("10 millis")
  })

describe("reply streams: live events and gaps", () => {
  withLayer(TestServices.make({ echo: { delay: "1 millis" } }), { excludeTestServices: true })((it) => {
    it.scoped("events reach the stream as they are published, in order", () =>
      Effect.gen(function*() {
        const { bus, conversation, id, items } = yield* streamingElsewhere("abc")
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 3, delta: "de" })
        // Heard at once: nothing waits for a fiber to take it.
        expect(deltas(items)).toEqual([[0, "abc"], [3, "de"]])
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 0, delta: "abcde" })
        bus.publish(conversation, { _tag: "Completed", message_id: id, content: "abcde" })
        expect(deltas(items)).toEqual([[0, "abc"], [3, "de"], ["end", "abcde"]])
      }))

    it.scoped("a delta past what was sent waits for storage to fill the gap; later events follow it", () =>
      Effect.gen(function*() {
        const { bus, conversation, id, items, store } = yield* streamingElsewhere("abc")
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 6, delta: "gh" })
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 8, delta: "ij" })
        expect(deltas(items)).toEqual([[0, "abc"]])
        yield* store.updateMessage(id, "abcdef", "streaming", yield* DateTime.now)
        bus.publish(conversation, { _tag: "Completed", message_id: id, content: "abcdefghij" })
        yield* settle(items, 4)
        expect(deltas(items)).toEqual([[0, "abc"], [3, "defgh"], [8, "ij"], ["end", "abcdefghij"]])
      }))

    it.scoped("a gap storage never fills is skipped, and the stream goes on", () =>
      Effect.gen(function*() {
        const { bus, conversation, id, items } = yield* streamingElsewhere("abc")
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 50, delta: "zz" })
        yield* settle(items, 2)
        expect(deltas(items)).toEqual([[0, "abc"], [50, "zz"]])
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 52, delta: "!" })
        expect(deltas(items)).toEqual([[0, "abc"], [50, "zz"], [52, "!"]])
      }))

    it.scoped("a listener that throws does not stop the others or the publisher", () =>
      Effect.gen(function*() {
        const bus = yield* ReplyBus.ReplyBus
        const conversation = newConversation()
        const heard: Array<string> = []
        yield* bus.listen(conversation, () => {
          throw new Error("a broken listener")
        })
        yield* bus.listen(conversation, (event) => void heard.push(event._tag))
        bus.publish(conversation, { _tag: "CancelRequested", message_id: Conversation.MessageId.make("m") })
        expect(heard).toEqual(["CancelRequested"])
      }))

    it.scoped("publish reaches the listeners before it returns, in order, from plain code and from effects; a listener that throws is logged by the bus's logger", () =>
      Effect.gen(function*() {
        const logged: Array<unknown> = []
        const capture = Logger.make(({ message }) => void logged.push(message))
        const bus = Context.get(
          yield* Layer.build(ReplyBus.layerLocal.pipe(Layer.provide(Logger.replace(Logger.defaultLogger, capture)))),
          ReplyBus.ReplyBus
        )
        const conversation = newConversation()
        const id = Conversation.MessageId.make("m")
        const heard: Array<string> = []
        yield* bus.listen(conversation, (event) => void heard.push(event._tag === "Delta" ? event.delta : event._tag))
        bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 0, delta: "a" })
        expect(heard).toEqual(["a"])
        yield* Effect.sync(() => bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 1, delta: "b" }))
        bus.publish(conversation, { _tag: "Completed", message_id: id, content: "ab" })
        expect(heard).toEqual(["a", "b", "Completed"])
        yield* bus.listen(conversation, () => {
          throw new Error("a broken listener")
        })
        bus.publish(conversation, { _tag: "CancelRequested", message_id: id })
        expect(heard).toEqual(["a", "b", "Completed", "CancelRequested"])
        for (let i = 0; i < 100 && logged.length === 0; i++) yield* Effect.sleep("5 millis")
        expect(logged.flat()).toContain("a reply listener failed")
      }))
  })
})
