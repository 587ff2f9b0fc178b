/**
 * The storage contract on PostgreSQL, in a database of its own.
 */
import { PostgresStorage } from "@hosting/storage-postgres"
import { A2aTaskStoreSuite, StorageSuite } from "@hosting/testing"
import { afterAll, describe, expect, it } from "vitest"
import { TestDatabase } from "@hosting/storage-postgres/testing"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

describe.skipIf(database === undefined)(`storage contract: postgres needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => expect(database?.url).toMatch(/^postgres:/))
})
if (database !== undefined) {
  StorageSuite.run("postgres", PostgresStorage.layer({ url: database.url, maxConnections: 4 }))
  A2aTaskStoreSuite.run("postgres", PostgresStorage.layer({ url: database.url, maxConnections: 4 }))
}
