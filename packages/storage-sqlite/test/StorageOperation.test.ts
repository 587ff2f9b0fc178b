/**
 * What every repository method of the SQL storage gives around its
 * statements: a statement that fails becomes the port's `StorageError`,
 * naming the method; the method's time is recorded whether it succeeded or
 * failed (`hosting_storage_operation_duration_seconds`).
 */
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Errors, Ids, Ports } from "@hosting/core"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Cause, Effect, Exit, Metric, MetricState, Option } from "effect"

/** How many times an operation's time was recorded so far. */
const timesRecorded = (operation: string) =>
  Effect.map(Metric.snapshot, (pairs) =>
    pairs
      .filter((pair) =>
        pair.metricKey.name === "hosting_storage_operation_duration_seconds" &&
        pair.metricKey.tags.some((tag) => tag.key === "operation" && tag.value === operation)
      )
      .reduce((n, pair) => n + (MetricState.isHistogramState(pair.metricState) ? pair.metricState.count : 0), 0))

describe("a storage operation", () => {
  it.layer(SqliteStorage.layer({ filename: ":memory:" }))((it) => {
    it.effect("a statement that fails gives the port's StorageError naming the method, and its time is recorded", () =>
      Effect.gen(function*() {
        const accounts = yield* Ports.AccountStore
        const sql = yield* SqlClient.SqlClient
        const operation = "SqlAccountStore.findByName"
        const before = yield* timesRecorded(operation)
        expect(Option.isNone(yield* accounts.findByName(Ids.AccountName.make("nobody")))).toBe(true)
        expect(yield* timesRecorded(operation)).toBe(before + 1)

        // The table under the method is gone: its statement fails.
        yield* sql`ALTER TABLE accounts RENAME TO accounts_away`
        const failed = yield* Effect.exit(accounts.findByName(Ids.AccountName.make("nobody")))
        yield* sql`ALTER TABLE accounts_away RENAME TO accounts`
        expect(Exit.isFailure(failed)).toBe(true)
        if (Exit.isFailure(failed)) {
          const error = Cause.failureOption(failed.cause)
          expect(Option.isSome(error) && error.value instanceof Errors.StorageError).toBe(true)
          if (Option.isSome(error)) expect((error.value as Errors.StorageError).operation).toBe(operation)
        }
        expect(yield* timesRecorded(operation)).toBe(before + 2)
      }))
  })
})
