/**
 * Several processes starting at once on an empty database (a deploy of three
 * replicas): each storage layer has its own pool, as each process would;
 * every one of them starts and serves, and the schema is migrated once.
 */
import { SqlClient } from "@effect/sql"
import { PostgresStorage } from "@hosting/storage-postgres"
import { Migrations } from "@hosting/storage-sql"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"

const available = await TestDatabase.isAvailable()
const databases: Array<TestDatabase.TestDatabase> = []
afterAll(() => Promise.all(databases.map((d) => d.drop())))

/** Builds `count` storage layers on one database at the same time; resolves with each one's exit and, for those that started, a count of the accounts it sees. */
const startTogether = (url: string, count: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const scope = yield* Scope.make()
    const starts = Array.from({ length: count }, (_, i) =>
      Layer.buildWithScope(PostgresStorage.layer({ url, maxConnections: 2, applicationName: `start-${i}` }), scope).pipe(
        Effect.flatMap((context) =>
          Effect.provide(
            Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: string }>`SELECT count(*) AS n FROM accounts`),
            context
          )
        ),
        Effect.exit
      ))
    const exits = yield* Effect.all(starts, { concurrency: "unbounded" })
    const migrations = yield* Effect.provide(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ migration_id: number; n: string }>`
        SELECT migration_id, count(*) AS n FROM hosting_migrations GROUP BY migration_id ORDER BY migration_id`),
      PostgresStorage.client({ url, maxConnections: 1 })
    )
    yield* Scope.close(scope, Exit.void)
    return { exits, migrations }
  }))

describe.skipIf(!available)(`concurrent first starts on Postgres${available ? "" : ` (skipped: ${TestDatabase.skipReason})`}`, () => {
  it("three starts at once on an empty database all serve, and each migration runs once", async () => {
    const database = await TestDatabase.create()
    databases.push(database)
    const { exits, migrations } = await startTogether(database.url, 3)
    for (const exit of exits) {
      expect(Exit.isSuccess(exit) ? "started" : String(exit.cause)).toBe("started")
      if (Exit.isSuccess(exit)) expect(exit.value).toEqual([{ n: "0" }])
    }
    expect(migrations.length).toBeGreaterThan(0)
    expect(migrations.every((m) => m.n === "1")).toBe(true)
    // Every migration of the record, in order (ids may skip a number that another branch holds).
    const ids = Object.keys(Migrations.migrations).map((key) => Number(key.split("_")[0])).sort((a, b) => a - b)
    expect(migrations.map((m) => m.migration_id)).toEqual(ids)
  })
})
