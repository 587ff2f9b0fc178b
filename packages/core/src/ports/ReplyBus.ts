/**
 * Live progress of assistant replies, per conversation, within one process.
 * Every event carries what it reports (a chunk with its offset, the whole
 * reply, the failure), so a subscriber that joins late can combine a
 * snapshot with what follows without a gap.
 */
import { Context, Effect, Layer, Queue, Runtime, type Scope } from "effect"
import type { ConversationId, MessageId } from "../model/Conversation.js"
import * as Members from "../internal/members.js"

/**
 * What happens to a reply. `offset` is the position of `delta` in the
 * reply's content; `at`, when the chunk arrived from the agent (ms since the
 * epoch, for the chunk-lag metric).
 */
export type ReplyEvent =
  | { readonly _tag: "Delta"; readonly message_id: MessageId; readonly offset: number; readonly delta: string; readonly at?: number }
  /** `trace_id`: the trace of the reply's turn (absent or null while traces are off). */
  | { readonly _tag: "Completed"; readonly message_id: MessageId; readonly content: string; readonly trace_id?: string | null }
  | { readonly _tag: "Failed"; readonly message_id: MessageId; readonly error: string }
  /** A user asked to stop the reply; the process receiving it stops it (it may be another process). */
  | { readonly _tag: "CancelRequested"; readonly message_id: MessageId }

/**
 * Each event reaches every listener of its conversation, and only those, in
 * the order published, while their scope is open (`ReplyBusSuite` in
 * @hosting/testing checks it). A bus that spans processes delivers a moment
 * after `publish` returns, may split a long `Delta` into parts at their
 * offsets, keeps the first 1000 characters of a `Failed` error, and may send
 * a long `Completed` as word to read the reply from storage: publish
 * `Completed` once the reply is stored.
 */
export class ReplyBus extends Context.Tag("@hosting/core/ReplyBus")<ReplyBus, {
  /**
   * Publishes one event of the conversation, from plain code or an effect
   * (`Effect.sync`): it returns at once and never throws. A reply's chunks
   * come this way straight from the socket that brought them.
   */
  readonly publish: (conversation: ConversationId, event: ReplyEvent) => void
  /**
   * Calls `listener` with every event of the conversation, in order, for the
   * life of the scope, as the event is published: no fiber waits for it. The
   * listener must return at once and never throw.
   */
  readonly listen: (conversation: ConversationId, listener: (event: ReplyEvent) => void) => Effect.Effect<void, never, Scope.Scope>
  /** How many listeners are open (for tests and metrics). */
  readonly subscribers: Effect.Effect<number>
}>() {}

/**
 * The events of a conversation for the life of the scope, queued for a
 * fiber to `take` one at a time: a view of `listen` for code that waits.
 */
export const subscribe = (
  bus: ReplyBus["Type"],
  conversation: ConversationId
): Effect.Effect<{ readonly take: Effect.Effect<ReplyEvent> }, never, Scope.Scope> =>
  Effect.acquireRelease(Queue.unbounded<ReplyEvent>(), Queue.shutdown).pipe(
    Effect.tap((queue) => bus.listen(conversation, (event) => void queue.unsafeOffer(event))),
    Effect.map((queue) => ({ take: Queue.take(queue) }))
  )

/**
 * Within one process: each conversation keeps its listeners, called as each
 * event is published. A listener
 * that throws is logged through `runtime` (the layer's own, so its logger);
 * the others and the publisher go on. Buses that span processes deliver
 * into one of these.
 */
export const makeLocal = (runtime: Runtime.Runtime<never> = Runtime.defaultRuntime): ReplyBus["Type"] => {
  type Listener = (event: ReplyEvent) => void
  const listeners = Members.make<ConversationId, Listener>()
  // A listener of its own for each call, so that the same function may listen twice.
  const listen = (conversation: ConversationId, listener: Listener) =>
    listeners.add(conversation, (event: ReplyEvent) => listener(event))
  const logFailure = Runtime.runFork(runtime)
  const publish = (conversation: ConversationId, event: ReplyEvent) => {
    for (const listener of listeners.of(conversation)) {
      try {
        listener(event)
      } catch (error) {
        logFailure(Effect.logError("a reply listener failed", error))
      }
    }
  }
  return ReplyBus.of({ publish, listen, subscribers: listeners.count })
}

/** The bus of one process. */
export const layerLocal: Layer.Layer<ReplyBus> = Layer.effect(ReplyBus, Effect.map(Effect.runtime<never>(), makeLocal))
