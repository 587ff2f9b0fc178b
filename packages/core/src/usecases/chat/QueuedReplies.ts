/**
 * A queued reply's wait (the `queue` strategy of a second send): it starts
 * once the replies of the conversation's earlier turns have ended, in this
 * process or another.
 */
import { type Context, Duration, Effect, Option } from "effect"
import type { ConversationId, Message, MessageId } from "../../model/Conversation.js"
import type { ConversationStore } from "../../ports/Ports.js"
import * as ReplyBus from "../../ports/ReplyBus.js"

/**
 * How often a queued reply reads storage for the replies it waits for, in
 * case the bus missed their end (their process died, or a bus across
 * processes dropped the event).
 */
const queueRecheck = Duration.seconds(1)

/** What the wait reads and sets of the queued reply. */
interface QueuedReply {
  readonly conversation: ConversationId
  readonly message_id: MessageId
  cancelled: boolean
}

/**
 * Waits until the replies `earlier` (of the conversation's earlier turns)
 * have ended, wherever they run: their ends arrive on the bus, and
 * storage is read again now and then in case one was missed. A cancel of
 * the queued reply meanwhile stops it. Gives the conversation before the
 * turn, with those replies as they ended.
 */
export const awaitEarlier = Effect.fnUntraced(function*(
  bus: Context.Tag.Service<ReplyBus.ReplyBus>,
  conversations: Context.Tag.Service<ConversationStore>,
  reply: QueuedReply,
  earlier: ReadonlyArray<MessageId>,
  turn: Message
) {
  const pending = new Set(earlier)
  // Listening before storage is read: an end between the two is not missed.
  const events = yield* ReplyBus.subscribe(bus, reply.conversation)
  const read = Effect.map(conversations.messages(reply.conversation), (messages) => {
    for (const m of messages) if (m.status !== "streaming") pending.delete(m.message_id)
    return messages
  })
  let messages = yield* read
  while (pending.size > 0) {
    const event = yield* Effect.timeoutOption(events.take, queueRecheck)
    if (Option.isNone(event)) {
      messages = yield* read
      continue
    }
    switch (event.value._tag) {
      case "Completed":
      case "Failed":
        pending.delete(event.value.message_id)
        break
      case "CancelRequested":
        if (event.value.message_id === reply.message_id) {
          reply.cancelled = true
          return yield* Effect.interrupt
        }
    }
    if (pending.size === 0) messages = yield* conversations.messages(reply.conversation)
  }
  const at = messages.findIndex((m) => m.message_id === turn.message_id)
  return at < 0 ? messages : messages.slice(0, at)
}, Effect.scoped)
