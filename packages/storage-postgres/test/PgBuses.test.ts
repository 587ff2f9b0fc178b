/**
 * The event and reply buses on PostgreSQL pass the bus contracts. Beyond
 * them, the reply bus across processes: two buses on one database
 * stand for two server processes. What one publishes reaches the other's
 * listeners in publication order, whether it was published from plain
 * code or from an effect; publications still queued when a
 * bus closes are sent before it lets go of its connection. A bus's own
 * listeners hear its publications at once, and once: not again when the
 * notification comes back.
 */
import { Conversation, Ports, ReplyBus } from "@hosting/core"
import { PgBuses, PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { EventBusSuite, ReplyBusSuite } from "@hosting/testing"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

if (database !== undefined) {
  const storage = PostgresStorage.layer({ url: database.url, maxConnections: 4 })
  EventBusSuite.run("postgres", PgBuses.eventBus().pipe(Layer.provide(storage)))
  ReplyBusSuite.run("postgres", PgBuses.replyBus().pipe(Layer.provide(storage)))
}

/** One process's reply bus on the test database, built in `scope`. */
const busIn = (url: string, scope: Scope.Scope) =>
  Layer.buildWithScope(PgBuses.replyBus().pipe(Layer.provide(PostgresStorage.layer({ url, maxConnections: 2 }))), scope).pipe(
    Effect.map((context) => Context.get(context, ReplyBus.ReplyBus))
  )

describe.skipIf(database === undefined)(`reply bus on postgres: needs a server (${TestDatabase.skipReason})`, () => {
  it("chunks published from plain code reach another process in order, with what an effect publishes between them, and none is lost when the publisher closes", async () => {
    const url = database!.url
    const heard = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const receiving = yield* busIn(url, yield* Effect.scope)
      const conversation = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
      const id = Conversation.MessageId.make("msg-1")
      const heard: Array<string> = []
      yield* receiving.listen(conversation, (event) =>
        void heard.push(event._tag === "Delta" ? event.delta : event._tag))
      const publishing = yield* Scope.make()
      const sender = yield* busIn(url, publishing)
      const words = Array.from({ length: 200 }, (_, i) => `w${i} `)
      let offset = 0
      for (const [i, word] of words.entries()) {
        const event = { _tag: "Delta", message_id: id, offset, delta: word } as const
        if (i === 100) yield* Effect.sync(() => sender.publish(conversation, event))
        else sender.publish(conversation, event)
        offset += word.length
      }
      sender.publish(conversation, { _tag: "Completed", message_id: id, content: words.join("") })
      // Closed at once: what is still queued goes out first.
      yield* Scope.close(publishing, Exit.void)
      for (let i = 0; i < 200 && heard.at(-1) !== "Completed"; i++) yield* Effect.sleep("10 millis")
      return heard
    })))
    expect(heard).toEqual([...Array.from({ length: 200 }, (_, i) => `w${i} `), "Completed"])
  })

  it("a process's own listeners hear what it publishes at once, and once; another process hears it through the database", async () => {
    const url = database!.url
    const { here, there } = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const scope = yield* Effect.scope
      const bus = yield* busIn(url, scope)
      const other = yield* busIn(url, scope)
      const conversation = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
      const id = Conversation.MessageId.make("msg-1")
      const here: Array<string> = []
      const there: Array<string> = []
      yield* bus.listen(conversation, (event) => void here.push(event._tag))
      yield* other.listen(conversation, (event) => void there.push(event._tag))
      bus.publish(conversation, { _tag: "Delta", message_id: id, offset: 0, delta: "hi" })
      // Heard here before this fiber yields: no round trip to the database.
      const atOnce = [...here]
      bus.publish(conversation, { _tag: "Completed", message_id: id, content: "hi" })
      for (let i = 0; i < 200 && there.length < 2; i++) yield* Effect.sleep("10 millis")
      // Long enough for the notifications to have come back here too.
      yield* Effect.sleep("200 millis")
      expect(atOnce).toEqual(["Delta"])
      return { here, there }
    })))
    expect(here).toEqual(["Delta", "Completed"])
    expect(there).toEqual(["Delta", "Completed"])
  })
})

describe.skipIf(database === undefined)(`a completed reply too large to notify, on postgres: needs a server (${TestDatabase.skipReason})`, () => {
  it("is read from storage by the other process and heard in its place: what was published after it waits for it", async () => {
    const url = database!.url
    const conversation = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
    const big = Conversation.MessageId.make("msg-big")
    const content = "x".repeat(20_000)
    // The receiving process's store, as far as the bus reads it: the stored reply, found after a while.
    const store = Layer.succeed(Ports.ConversationStore, {
      messages: () =>
        Effect.as(Effect.sleep("100 millis"), [{ message_id: big, content, trace_id: null } as unknown as Conversation.Message])
    } as unknown as Ports.ConversationStore["Type"])
    const heard = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const scope = yield* Effect.scope
      const storage = PostgresStorage.layer({ url, maxConnections: 2 })
      const receiving = yield* Layer.buildWithScope(PgBuses.replyBus().pipe(Layer.provide(Layer.merge(storage, store))), scope).pipe(
        Effect.map((context) => Context.get(context, ReplyBus.ReplyBus))
      )
      const sender = yield* busIn(url, scope)
      const heard: Array<string> = []
      yield* receiving.listen(conversation, (event) =>
        void heard.push(event._tag === "Delta" ? event.delta : event._tag === "Completed" ? `Completed ${event.content.length}` : event._tag))
      const next = Conversation.MessageId.make("msg-next")
      sender.publish(conversation, { _tag: "Delta", message_id: big, offset: 0, delta: "a" })
      sender.publish(conversation, { _tag: "Completed", message_id: big, content })
      sender.publish(conversation, { _tag: "Delta", message_id: next, offset: 0, delta: "b" })
      sender.publish(conversation, { _tag: "Completed", message_id: next, content: "b" })
      for (let i = 0; i < 300 && heard.length < 4; i++) yield* Effect.sleep("10 millis")
      return heard
    })))
    expect(heard).toEqual(["a", `Completed ${content.length}`, "b", "Completed 1"])
  })
})
