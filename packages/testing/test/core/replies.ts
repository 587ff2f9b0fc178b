import { Chat, Conversation, Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, Option } from "effect"

/** A fresh conversation id, as a client would choose one. */
export const newConversation = () => Conversation.ConversationId.make(globalThis.crypto.randomUUID())

/** A seeded team, one deployment of theirs and the chat service: where most chat tests start. */
export const chatSetup = Effect.gen(function*() {
  const team = yield* Seed.team
  const deployment = (yield* Seed.deployment(team)).id
  const chat = yield* Chat.Chat
  return { team, deployment, chat }
})

/** The latest reply of a conversation once it ended (waits up to 5 s). */
export const waitForReply = (conversation: Conversation.ConversationId) =>
  Effect.gen(function*() {
    const store = yield* Ports.ConversationStore
    for (let i = 0; i < 500; i++) {
      const reply = yield* store.latestReply(conversation)
      if (Option.isSome(reply) && reply.value.status !== "streaming") return reply.value
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    throw new Error("the reply never ended")
  })
