/** Chat under concurrent sends and cancels (ChatSuite) on PostgreSQL, shared as several server processes share it. */
import { PostgresStorage, TestDatabase } from "@hosting/storage-postgres"
import { ChatSuite } from "@hosting/testing"
import { afterAll, describe, it } from "vitest"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

if (database === undefined) {
  describe.skip(`chat under concurrency on PostgreSQL (${TestDatabase.skipReason})`, () => {
    it("needs a server", () => undefined)
  })
} else {
  ChatSuite.run("postgres", PostgresStorage.layer({ url: database.url, maxConnections: 4 }), { sharedStorage: true })
}
