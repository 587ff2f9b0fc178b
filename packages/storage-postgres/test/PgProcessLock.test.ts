/**
 * A dead process's replies on PostgreSQL. Each process holds a session lock
 * (PgProcessLock) that its reply leases name; when the process dies its
 * connection goes with it, and a live process closes its replies as failed
 * within about a second, however long their leases still run. A process
 * whose connection is cut while it lives takes its lock again at once and
 * keeps its replies.
 */
import { layer as withLayer } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Chat, Conversation, Ports, ReplyBus } from "@hosting/core"
import { PgProcessLock, PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { OtherProcess, Seed, TestServices } from "@hosting/testing"
import { Context, Duration, Effect, Exit, Layer, Option, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

/** Longer than the test: only the death of the owner can close the reply in time. */
const lease = Duration.seconds(30)

// Without a server the suite shows as skipped, with the reason in its title.
describe.skipIf(database === undefined)(`dead processes on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})
if (database !== undefined) {
  const url = database.url
  // One storage (layers are shared by reference): the chat's, and the SqlClient of the test's own queries.
  const storage = Layer.orDie(PostgresStorage.layer({ url, maxConnections: 4 }))
  const services = Layer.merge(TestServices.make({ storageLayer: storage, sharedStorage: true, leaseDuration: lease }), storage)
  describe("a dead process's replies on PostgreSQL", () => {
    withLayer(services, { excludeTestServices: true })((it) => {
      it.effect("are closed as failed within 2 s of its death, long before their lease ends; a process whose connection was cut keeps them", () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const deployment = (yield* Seed.deployment(team)).id
          const chat = yield* Chat.Chat
          const store = yield* Ports.ConversationStore
          const bus = yield* ReplyBus.ReplyBus
          const sql = yield* SqlClient.SqlClient

          // Another process, receiving a reply in a conversation of ours.
          const other = yield* Scope.make()
          const owner = Context.get(yield* Layer.buildWithScope(PgProcessLock.layer({ url, applicationName: "other" }), other), Ports.LeaseOwner)
          const conversation = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
          yield* chat.send(team.principals.member, deployment, conversation, { content: "first" })
          const heard = yield* ReplyBus.subscribe(bus, conversation)
          const theirs = yield* OtherProcess.streamingReply(conversation, owner.name, lease)
          const status = Effect.map(store.latestReply(conversation), (m) => Option.getOrThrow(m).status)

          // Alive: its reply is left alone, sweep after sweep.
          yield* Effect.sleep("1200 millis")
          expect(yield* status).toBe("streaming")

          // Its connection is cut (as a restart of the database or an administrator does): it takes its lock again.
          const cut = yield* sql<{ readonly pid: number }>`SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
            WHERE application_name = 'other process lock'`
          expect(cut.length).toBe(1)
          yield* Effect.sleep("1500 millis")
          expect(yield* status).toBe("streaming")
          const again = yield* sql`SELECT 1 FROM pg_stat_activity WHERE application_name = 'other process lock'`
          expect(again.length).toBe(1)

          // It dies: its connection goes with it.
          const died = Date.now()
          yield* Scope.close(other, Exit.void)
          yield* OtherProcess.failedEvent(heard, theirs.message_id)
          expect(Date.now() - died).toBeLessThan(2_000)
          const closed = Option.getOrThrow(yield* store.latestReply(conversation))
          expect([closed.message_id, closed.status, closed.content]).toEqual([theirs.message_id, "failed", "half"])
          expect(Option.getOrThrow(yield* store.find(conversation)).assistant_streaming).toBe(false)
        }).pipe(Effect.scoped), 20_000)
    })
  })
}
