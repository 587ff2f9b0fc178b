/**
 * Reply leases when several processes share the storage: a reply whose
 * process stopped renewing is closed by the others once its lease ends, and
 * a reply that this process keeps receiving is never closed, however long
 * it runs.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Conversation, Ports, ReplyBus } from "@hosting/core"
import { OtherProcess, TestServices } from "@hosting/testing"
import { Duration, Effect, Option } from "effect"
import { chatSetup } from "./replies.js"

const lease = Duration.millis(300)

describe("reply leases on shared storage", () => {
  withLayer(TestServices.make({ sharedStorage: true, leaseDuration: lease, echo: { delay: "15 millis" } }), {
    excludeTestServices: true
  })((it) => {
    it.scoped("an abandoned reply closes as failed once its lease ends (its streams hear it); a reply in flight here outlives many leases", () =>
      Effect.gen(function*() {
        const { team, deployment, chat } = yield* chatSetup
        const store = yield* Ports.ConversationStore
        const bus = yield* ReplyBus.ReplyBus

        // A reply another process was receiving when it died: its lease runs out in 300 ms.
        const abandoned = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
        yield* chat.send(team.principals.member, deployment, abandoned, { content: "first" })
        const heard = yield* ReplyBus.subscribe(bus, abandoned)
        const orphan = yield* OtherProcess.streamingReply(abandoned, "a-process-that-died", lease)

        // A long reply received here: about 2 s, several leases long.
        const long = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
        const words = Array.from({ length: 120 }, (_, i) => `w${i}`).join(" ")
        yield* chat.send(team.principals.member, deployment, long, { content: words })

        const started = Date.now()
        yield* OtherProcess.failedEvent(heard, orphan.message_id)
        expect(Date.now() - started).toBeLessThan(2_000)
        const closed = Option.getOrThrow(yield* store.latestReply(abandoned))
        expect([closed.message_id, closed.status, closed.content]).toEqual([orphan.message_id, "failed", "half"])

        for (let i = 0; i < 400; i++) {
          const reply = Option.getOrThrow(yield* store.latestReply(long))
          if (reply.status !== "streaming") break
          yield* Effect.sleep("20 millis")
        }
        const reply = Option.getOrThrow(yield* store.latestReply(long))
        expect(Date.now() - started).toBeGreaterThan(Duration.toMillis(lease) * 3)
        expect([reply.status, reply.content]).toEqual(["complete", words])
      }))
  })
})
