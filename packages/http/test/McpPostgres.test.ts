/** The MCP suite (McpSuite.ts) on PostgreSQL storage, in a database of its own. */
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Layer } from "effect"
import { afterAll, describe, it } from "vitest"
import * as McpSuite from "./McpSuite.js"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

// Without a server the suite shows as skipped, with the reason in its title.
describe.skipIf(database === undefined)(`MCP on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})
if (database !== undefined) {
  McpSuite.run("PostgreSQL", Layer.orDie(PostgresStorage.layer({ url: database.url, maxConnections: 4 })))
}
