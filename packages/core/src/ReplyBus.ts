/**
 * Live progress of assistant replies, per conversation, within one process.
 * Every event carries what it reports (a chunk with its offset, the whole
 * reply, the failure), so a subscriber that joins late can combine a
 * snapshot with what follows without a gap.
 */
import { Context, Effect, Layer, Queue, type Scope } from "effect"
import type { ConversationId, MessageId } from "./Conversation.js"

/** What happens to a reply. `offset` is the position of `delta` in the reply's content. */
export type ReplyEvent =
  | { readonly _tag: "Delta"; readonly message_id: MessageId; readonly offset: number; readonly delta: string }
  | { readonly _tag: "Completed"; readonly message_id: MessageId; readonly content: string }
  | { readonly _tag: "Failed"; readonly message_id: MessageId; readonly error: string }
  /** A user asked to stop the reply; the process receiving it stops it (it may be another process). */
  | { readonly _tag: "CancelRequested"; readonly message_id: MessageId }

export class ReplyBus extends Context.Tag("@hosting/core/ReplyBus")<ReplyBus, {
  readonly publish: (conversation: ConversationId, event: ReplyEvent) => Effect.Effect<void>
  /** Subscribes for the life of the scope; `take` waits for the next event. */
  readonly subscribe: (conversation: ConversationId) => Effect.Effect<{ readonly take: Effect.Effect<ReplyEvent> }, never, Scope.Scope>
  readonly subscribers: Effect.Effect<number>
}>() {}

/**
 * Within one process: each conversation keeps its subscribers' queues. Buses
 * that span processes deliver into one of these.
 */
export const makeLocal = (): ReplyBus["Type"] => {
  const byConversation = new Map<ConversationId, Set<Queue.Queue<ReplyEvent>>>()
  let open = 0
  return ReplyBus.of({
    publish: (conversation, event) =>
      Effect.sync(() => {
        for (const queue of byConversation.get(conversation) ?? []) queue.unsafeOffer(event)
      }),
    subscribe: (conversation) =>
      Effect.acquireRelease(
        Effect.map(Queue.unbounded<ReplyEvent>(), (queue) => {
          let set = byConversation.get(conversation)
          if (set === undefined) byConversation.set(conversation, (set = new Set()))
          set.add(queue)
          open++
          return queue
        }),
        (queue) =>
          Effect.suspend(() => {
            const set = byConversation.get(conversation)
            set?.delete(queue)
            if (set?.size === 0) byConversation.delete(conversation)
            open--
            return Queue.shutdown(queue)
          })
      ).pipe(Effect.map((queue) => ({ take: Queue.take(queue) }))),
    subscribers: Effect.sync(() => open)
  })
}

/** The bus of one process. */
export const layerLocal: Layer.Layer<ReplyBus> = Layer.sync(ReplyBus, makeLocal)
