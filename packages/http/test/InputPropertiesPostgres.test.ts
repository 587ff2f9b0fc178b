/** The input properties of every route (InputProperties.ts) on PostgreSQL storage, in a database of their own. */
import { PostgresStorage } from "@hosting/storage-postgres"
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { Layer } from "effect"
import { afterAll, describe, it } from "vitest"
import * as InputProperties from "./InputProperties.js"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

// Without a server the suite shows as skipped, with the reason in its title.
describe.skipIf(database === undefined)(`input properties on PostgreSQL: needs a server (${TestDatabase.skipReason})`, () => {
  it("runs against a fresh database", () => {
    if (database?.url.startsWith("postgres") !== true) throw new Error("no database")
  })
})
if (database !== undefined) {
  InputProperties.run("PostgreSQL", Layer.orDie(PostgresStorage.layer({ url: database.url, maxConnections: 4 })))
}
