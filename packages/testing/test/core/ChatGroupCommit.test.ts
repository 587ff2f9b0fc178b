/**
 * Sends that arrive together are stored in one transaction (group commit);
 * what one of them meets never changes the outcome of another.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { TestServices } from "@hosting/testing"
import { Cause, Effect, Exit, Fiber, Option } from "effect"
import { chatSetup, newConversation, waitForReply } from "./replies.js"

describe("sends arriving together", () => {
  withLayer(TestServices.make(), { excludeTestServices: true })((it) => {
    it.effect("share a transaction: a refused send and a repeated one change nothing for the others, whose replies complete", () =>
      Effect.gen(function*() {
        const { team, deployment, chat } = yield* chatSetup
        const { admin, member } = team.principals
        const theirs = newConversation()
        const repeated = newConversation()
        yield* chat.send(admin, deployment, theirs, { content: "the admin's" })
        const first = yield* chat.send(member, deployment, repeated, { content: "once", client_message_id: "c-1" })
        const fresh = Array.from({ length: 8 }, () => newConversation())
        const sends = [
          ...fresh.map((id, i) => chat.send(member, deployment, id, { content: `hello ${i}` })),
          chat.send(member, deployment, theirs, { content: "not mine" }),
          chat.send(member, deployment, repeated, { content: "once", client_message_id: "c-1" })
        ]
        const exits = yield* Effect.forEach(sends, Effect.exit, { concurrency: "unbounded" })
        expect(exits.slice(0, 8).every(Exit.isSuccess)).toBe(true)
        expect(Exit.isFailure(exits[8]!) && Cause.failureOption(exits[8]!.cause)).toEqual(
          Option.some(expect.objectContaining({ _tag: "ConversationNotFound" }))
        )
        expect(exits[9]).toStrictEqual(Exit.succeed(first))
        for (const [i, id] of fresh.entries()) {
          const reply = yield* waitForReply(id)
          expect([reply.status, reply.content]).toEqual(["complete", `hello ${i}`])
        }
        const store = yield* Ports.ConversationStore
        expect((yield* store.messages(theirs)).map((m) => m.content)).toEqual(["the admin's", "the admin's"])
        expect((yield* store.messages(repeated)).length).toBe(2)
      }))

    it.effect("a send whose caller goes away once its turn is submitted still stores it and starts its reply", () =>
      Effect.gen(function*() {
        const { team, deployment, chat } = yield* chatSetup
        const conversation = newConversation()
        const sending = yield* Effect.fork(chat.send(team.principals.member, deployment, conversation, { content: "still here" }))
        // The send runs up to its wait for the group's commit, then its caller leaves.
        yield* Effect.yieldNow()
        yield* Fiber.interrupt(sending)
        const reply = yield* waitForReply(conversation)
        expect([reply.status, reply.content]).toEqual(["complete", "still here"])
      }))
  })
})
