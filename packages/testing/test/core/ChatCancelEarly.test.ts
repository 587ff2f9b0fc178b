/**
 * A cancel that comes between a turn's commit and the start of its reply:
 * it finds the reply stored as streaming but not running yet. The reply it
 * answers "cancelled" for must end so, not complete.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { MemoryStorage, TestServices } from "@hosting/testing"
import { Effect, Fiber, Layer, Option } from "effect"
import { chatSetup, newConversation, waitForReply } from "./replies.js"

/** What each commit waits for once it is done, before the committing fiber goes on. */
let afterCommit: Effect.Effect<void> = Effect.void

/** Memory storage whose commits can be held open: the turn is stored, its sender not told yet. */
const heldCommits = Layer.merge(
  MemoryStorage.layer,
  Layer.effect(
    Ports.Transactor,
    Effect.map(Ports.Transactor, (tx) =>
      Ports.Transactor.of({ withTransaction: (effect) => Effect.tap(tx.withTransaction(effect), () => Effect.suspend(() => afterCommit)) }))
  ).pipe(Layer.provide(MemoryStorage.layer))
)

describe("a cancel before the reply started", () => {
  withLayer(TestServices.make({ storageLayer: heldCommits, echo: { delay: "10 millis" } }), { excludeTestServices: true })((it) => {
    it.effect("stops the reply once it starts: the reply it answered cancelled for ends cancelled", () =>
      Effect.gen(function*() {
        const { team, deployment, chat } = yield* chatSetup
        const store = yield* Ports.ConversationStore
        const conversation = newConversation()
        afterCommit = Effect.sleep("300 millis")
        const sending = yield* Effect.fork(chat.send(team.principals.member, deployment, conversation, { content: "a b c d e f g h" }))
        let stored = Option.none<string>()
        for (let i = 0; i < 100 && Option.isNone(stored); i++) {
          yield* Effect.sleep("5 millis")
          stored = Option.map(Option.filter(yield* store.latestReply(conversation), (m) => m.status === "streaming"), (m) => m.message_id)
        }
        const answer = yield* chat.cancel(team.principals.member, deployment, conversation)
        afterCommit = Effect.void
        expect(answer).toEqual({ status: "cancelled", message_id: Option.getOrThrow(stored) })
        yield* Fiber.join(sending)
        const reply = yield* waitForReply(conversation)
        expect([reply.message_id, reply.status]).toEqual([Option.getOrThrow(stored), "cancelled"])
      }))
  })
})
