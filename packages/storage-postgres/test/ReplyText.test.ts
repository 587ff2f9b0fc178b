/**
 * An agent's reply with a NUL in it, on PostgreSQL (whose text cannot hold
 * one): the NUL becomes U+FFFD as the chunk arrives (Chat publishes and
 * stores the same text), and the reply completes, as on every storage.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AgentRuntime, Chat, Conversation, Ports } from "@hosting/core"
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Seed, TestServices } from "@hosting/testing"
import { Effect, Layer, Option } from "effect"
import { afterAll, it as plain } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

const agent = Layer.succeed(
  AgentRuntime.AgentRuntime,
  AgentRuntime.AgentRuntime.of({ reply: (_, emit) => Effect.sync(() => ["before\u0000", "after"].forEach((chunk) => emit(chunk))) })
)

// Without a server the suite shows as skipped, with the reason in its title.
describe.skipIf(database === undefined)(`agent text on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  plain("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})
if (database !== undefined) {
  const storage = Layer.orDie(PostgresStorage.layer({ url: database.url, maxConnections: 4 }))
  describe("agent text on PostgreSQL", () => {
    withLayer(TestServices.make({ agentLayer: agent, storageLayer: storage }), { excludeTestServices: true })((it) => {
      it.effect("a NUL from the agent is stored as U+FFFD, and the reply completes", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const deployment = (yield* Seed.deployment(team)).id
          const chat = yield* Chat.Chat
          const conversation = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
          yield* chat.send(team.principals.member, deployment, conversation, { content: "say something odd" })
          const store = yield* Ports.ConversationStore
          let reply: Conversation.Message | undefined
          for (let i = 0; i < 500 && reply === undefined; i++) {
            const latest = yield* store.latestReply(conversation)
            if (Option.isSome(latest) && latest.value.status !== "streaming") reply = latest.value
            else yield* Effect.sleep("10 millis")
          }
          expect([reply?.status, reply?.content]).toEqual(["complete", "before\uFFFDafter"])
          const history = yield* chat.history(team.principals.member, deployment, conversation)
          expect(history.at(-1)?.content).toBe("before\uFFFDafter")
        }))
    })
  })
}
