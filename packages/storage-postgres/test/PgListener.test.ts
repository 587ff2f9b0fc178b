/**
 * Notifications heard on a connection of the process's own (PgListener):
 * every handler of a channel gets each payload in the order it was sent,
 * nothing after its scope closed, and a listening connection that is cut
 * is opened again and listens on its channels again. Without a listener
 * (a PgClient of the embedder's), the buses hear notifications through
 * `PgClient.listen` and still pass the bus contracts.
 */
import { PgBuses, PgListener, PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { SqlStorage } from "@hosting/storage-sql"
import { EventBusSuite, ReplyBusSuite } from "@hosting/testing"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

if (database !== undefined) {
  // The buses on a PgClient made without PostgresStorage's layer: no PgListener in their context.
  const withoutListener = PostgresStorage.client({ url: database.url, maxConnections: 4 })
  EventBusSuite.run("postgres without a listener of its own", PgBuses.eventBus().pipe(Layer.provide(withoutListener)))
  ReplyBusSuite.run(
    "postgres without a listener of its own",
    PgBuses.replyBus().pipe(Layer.provide(SqlStorage.layer), Layer.provide(withoutListener))
  )
}

/** Sends `payloads` on `channel`, in order, from a connection of the test's own. */
const notify = (url: string, channel: string, payloads: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      for (const payload of payloads) await client.query("SELECT pg_notify($1, $2)", [channel, payload])
    } finally {
      await client.end()
    }
  })

/** Waits (at most 5 s) until `done` holds. */
const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500 && !done(); i++) yield* Effect.sleep("10 millis")
  })

describe.skipIf(database === undefined)(`notifications on a connection of our own: needs a server (${TestDatabase.skipReason})`, () => {
  const listenerIn = (scope: Scope.Scope, applicationName = "hosting-test") =>
    Layer.buildWithScope(PgListener.layer({ url: database!.url, applicationName }), scope).pipe(
      Effect.map((context) => Context.get(context, PgListener.PgListener))
    )

  it("hands each payload of a channel to every handler of it, in the order sent, and none once the handler's scope closed", async () => {
    const url = database!.url
    const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const listener = yield* listenerIn(yield* Effect.scope)
      const channel = `test_${globalThis.crypto.randomUUID().replaceAll("-", "")}`
      const first: Array<string> = []
      const second: Array<string> = []
      const other: Array<string> = []
      const secondScope = yield* Scope.make()
      yield* listener.listen(channel, (payload) => void first.push(payload))
      yield* listener.listen(channel, (payload) => void second.push(payload)).pipe(Scope.extend(secondScope))
      yield* listener.listen(`${channel}_other`, (payload) => void other.push(payload))
      const sent = Array.from({ length: 50 }, (_, i) => `p${i}`)
      yield* notify(url, channel, sent)
      yield* until(() => first.length === 50 && second.length === 50)
      yield* Scope.close(secondScope, Exit.void)
      yield* notify(url, channel, ["after"])
      yield* until(() => first.length === 51)
      // Long enough for a payload to the closed handler to have arrived.
      yield* Effect.sleep("100 millis")
      return { first, second, other, sent }
    })))
    expect(result.first).toEqual([...result.sent, "after"])
    expect(result.second).toEqual(result.sent)
    expect(result.other).toEqual([])
  })

  it("a listening connection that is cut is opened again and listens on its channels again", async () => {
    const url = database!.url
    const applicationName = `hosting-test-${globalThis.crypto.randomUUID().slice(0, 8)}`
    const heard = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const listener = yield* listenerIn(yield* Effect.scope, applicationName)
      const channel = `test_${globalThis.crypto.randomUUID().replaceAll("-", "")}`
      const heard: Array<string> = []
      yield* listener.listen(channel, (payload) => void heard.push(payload))
      yield* notify(url, channel, ["before"])
      yield* until(() => heard.length === 1)
      // The database ends the listening backend, as a restart or an operator would.
      yield* Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          const ended = await client.query(
            "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1",
            [`${applicationName} listen`]
          )
          expect(ended.rows).toEqual([{ ended: true }])
        } finally {
          await client.end()
        }
      })
      // Sent until one is heard: those sent before the connection is back are not.
      for (let i = 0; i < 100 && !heard.includes("again"); i++) {
        yield* notify(url, channel, ["again"])
        yield* Effect.sleep("50 millis")
      }
      return heard
    })))
    expect(heard[0]).toBe("before")
    expect(heard).toContain("again")
  })
})
