/**
 * The life of a reply beyond the happy path: an agent that fails, a server
 * that stops mid-reply, and a start after a crash.
 */
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import { Chat, Conversation, Ports } from "@hosting/core"
import { Seed, TestServices } from "@hosting/testing"
import { DateTime, Effect, Exit, Layer, Option, Scope } from "effect"
import { chatSetup, newConversation, waitForReply } from "./replies.js"


describe("a failing agent", () => {
  withLayer(TestServices.make({ echo: { failOn: "boom" } }), { excludeTestServices: true })((it) => {
    it.effect("on agent failure the reply is stored as failed with what arrived before", () =>
      Effect.gen(function*() {
        const { team, deployment, chat } = yield* chatSetup
        const conversation = newConversation()
        yield* chat.send(team.principals.member, deployment, conversation, { content: "one two boom three" })
        const reply = yield* waitForReply(conversation)
        expect([reply.status, reply.content]).toEqual(["failed", "one two "])
        const list = yield* chat.list(team.principals.member, deployment)
        expect(list[0]!.assistant_streaming).toBe(false)
      }))
  })
})

describe("stopping and starting", () => {
  it.live("a reply still streaming at shutdown is stored as failed; a start after a crash closes what was left streaming", () =>
    Effect.gen(function*() {
      // One storage for the two runs; each run builds its own Chat on it.
      const storage = yield* Layer.build(TestServices.make({ echo: { delay: "20 millis" } }))
      const run = (effect: Effect.Effect<void, unknown, Chat.Chat | Ports.ConversationStore>) =>
        Effect.gen(function*() {
          const scope = yield* Scope.make()
          const context = yield* Layer.buildWithScope(Chat.Chat.Default, scope).pipe(Effect.provide(storage))
          yield* effect.pipe(Effect.provide(context), Effect.provide(storage))
          yield* Scope.close(scope, Exit.void)
        })
      const team = yield* Seed.team.pipe(Effect.provide(storage))
      const deployment = (yield* Seed.deployment(team).pipe(Effect.provide(storage))).id
      const conversation = newConversation()
      yield* run(Effect.gen(function*() {
        const chat = yield* Chat.Chat
        yield* chat.send(team.principals.member, deployment, conversation, {
          content: Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ")
        })
        yield* Effect.sleep("150 millis")
      }))
      const store = Ports.ConversationStore
      const afterStop = Option.getOrThrow(yield* Effect.flatMap(store, (s) => s.latestReply(conversation)).pipe(Effect.provide(storage)))
      expect(afterStop.status).toBe("failed")
      expect(afterStop.content.length).toBeGreaterThan(0)
      // A crash leaves a reply streaming; the next start closes it.
      const orphan = new Conversation.Message({
        message_id: Conversation.MessageId.make(`msg-${globalThis.crypto.randomUUID()}`),
        role: "assistant",
        content: "half a sen",
        attachments: [],
        timestamp: DateTime.unsafeMake("2026-11-01T00:00:00Z"),
        status: "streaming"
      })
      yield* Effect.flatMap(store, (s) => s.append({ conversation_id: conversation, message: orphan, client_message_id: Option.none() })).pipe(
        Effect.provide(storage)
      )
      yield* run(Effect.gen(function*() {
        const s = yield* Ports.ConversationStore
        const reply = Option.getOrThrow(yield* s.latestReply(conversation))
        expect([reply.message_id, reply.status, reply.content]).toEqual([orphan.message_id, "failed", "half a sen"])
        expect(yield* s.closeStreaming(Option.none())).toEqual([])
      }))
    }).pipe(Effect.scoped))
})
