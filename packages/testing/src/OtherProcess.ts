/**
 * A reply that another process is receiving, as the shared storage shows it
 * to this one: for tests of how a process treats the replies of one that
 * died or got stuck.
 */
import { Conversation, Ports, type ReplyBus } from "@hosting/core"
import { DateTime, type Duration, Effect, Option } from "effect"

/** Stores a streaming reply (content "half") in `conversation`, leased to `owner` for `lease` from now. */
export const streamingReply = (conversation: Conversation.ConversationId, owner: string, lease: Duration.DurationInput) =>
  Effect.gen(function*() {
    const store = yield* Ports.ConversationStore
    const now = yield* DateTime.now
    const reply = new Conversation.Message({
      message_id: Conversation.MessageId.make(`msg-${globalThis.crypto.randomUUID()}`),
      role: "assistant",
      content: "half",
      attachments: [],
      timestamp: now,
      status: "streaming"
    })
    yield* store.append({
      conversation_id: conversation,
      message: reply,
      client_message_id: Option.none(),
      lease: { owner, expires_at: DateTime.addDuration(now, lease) }
    })
    return reply
  })

/** Waits for the `Failed` event of a message on a subscription of the reply bus. */
export const failedEvent = (subscription: { readonly take: Effect.Effect<ReplyBus.ReplyEvent> }, message: Conversation.MessageId) =>
  Effect.gen(function*() {
    while (true) {
      const event = yield* subscription.take
      if (event._tag === "Failed" && event.message_id === message) return event
    }
  })
