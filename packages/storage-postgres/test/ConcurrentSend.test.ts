/** A second send while a reply streams (ConcurrentSendSuite, issue 28) on PostgreSQL, shared as several server processes share it. */
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { ConcurrentSendSuite } from "@hosting/testing"
import { afterAll, describe, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

// Without a server the suite shows as skipped, with the reason in its title.
describe.skipIf(database === undefined)(`concurrent sends on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})
if (database !== undefined) {
  ConcurrentSendSuite.run("postgres", PostgresStorage.layer({ url: database.url, maxConnections: 4 }), { sharedStorage: true })
}
