import { Conversation, Ports } from "@hosting/core"
import { Effect, Option } from "effect"

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
