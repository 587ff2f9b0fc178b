/**
 * A reply running in this process is ahead of storage: what arrived since
 * its last write is in memory only. The history read and a reply stream
 * opened meanwhile give what arrived, not what was stored.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AgentRuntime, type Chat, Conversation, Ports } from "@hosting/core"
import { MemoryStorage, TestServices } from "@hosting/testing"
import { Deferred, Effect, Layer, Option, Schema } from "effect"
import { chatSetup, newConversation, waitForReply } from "./replies.js"

/** Memory storage that never stores a reply's progress: only its end is written, so storage lags the whole reply. */
const laggingStorage = Layer.merge(
  MemoryStorage.layer,
  Layer.effect(
    Ports.ConversationStore,
    Effect.map(Ports.ConversationStore, (store) => Ports.ConversationStore.of({ ...store, flushReplies: () => Effect.void }))
  ).pipe(Layer.provide(MemoryStorage.layer))
)

/** Released by the test: the agent sends its first chunk, then waits for it before the rest. */
let gate: Deferred.Deferred<void> | undefined

/** An agent that answers "first " at once, the rest once the gate opens. */
const gatedAgent = Layer.succeed(
  AgentRuntime.AgentRuntime,
  AgentRuntime.AgentRuntime.of({
    reply: (_turn, emit) =>
      Effect.sync(() => emit("first ")).pipe(
        Effect.zipRight(Effect.suspend(() => Deferred.await(gate!))),
        Effect.zipRight(Effect.sync(() => emit("and the rest")))
      )
  })
)

/** A receiver that keeps every item it is given in `items`. */
const into = (items: Array<Chat.ReplyItem>) => ({
  push: (batch: ReadonlyArray<Chat.ReplyItem>) => {
    items.push(...batch)
    return true
  },
  end: () => {}
})

describe("a reply ahead of storage", () => {
  withLayer(TestServices.make({ storageLayer: laggingStorage, agentLayer: gatedAgent }), { excludeTestServices: true })((it) => {
    it.scoped("the history and a new reply stream give what arrived while the reply runs; storage has it at the end", () =>
      Effect.gen(function*() {
        gate = yield* Deferred.make<void>()
        const { chat, deployment, team } = yield* chatSetup
        const store = yield* Ports.ConversationStore
        const member = team.principals.member
        const conversation = newConversation()
        yield* chat.send(member, deployment, conversation, { content: "hello" })
        // The first chunk has arrived once a stream hears of it (the agent emits it as its reply starts).
        const heard: Array<Chat.ReplyItem> = []
        for (let i = 0; i < 200 && !heard.some((item) => item._tag === "Delta"); i++) {
          heard.length = 0
          yield* Effect.scoped(chat.follow(member, deployment, conversation, Option.none(), into(heard)))
          if (!heard.some((item) => item._tag === "Delta")) yield* Effect.sleep("5 millis")
        }

        const stored = Option.getOrThrow(yield* store.latestReply(conversation))
        expect([stored.content, stored.status]).toEqual(["", "streaming"])

        const history = yield* chat.history(member, deployment, conversation)
        const reply = history[1]!
        expect([reply.message_id, reply.role, reply.content, reply.status]).toEqual([stored.message_id, "assistant", "first ", "streaming"])
        expect([reply.timestamp, reply.attachments, reply.trace_id]).toEqual([stored.timestamp, stored.attachments, stored.trace_id])
        // A record of its class, as the answer's encoder expects.
        expect(reply).toBeInstanceOf(Conversation.Message)
        expect(Schema.is(Conversation.Message)(reply)).toBe(true)

        const items: Array<Chat.ReplyItem> = []
        yield* chat.follow(member, deployment, conversation, Option.none(), into(items))
        expect(items).toEqual([{ _tag: "Delta", id: `${stored.message_id}:6`, message_id: stored.message_id, index: 0, delta: "first " }])

        yield* Deferred.succeed(gate, undefined)
        const ended = yield* waitForReply(conversation)
        expect([ended.content, ended.status]).toEqual(["first and the rest", "complete"])
        expect((yield* chat.history(member, deployment, conversation))[1]!.content).toBe("first and the rest")
      }))
  })
})
