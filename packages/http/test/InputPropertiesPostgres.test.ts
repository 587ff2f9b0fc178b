/** The input properties of every route (InputProperties.ts) on PostgreSQL storage, in a database of their own. */
import { PostgresStorage, TestDatabase } from "@hosting/storage-postgres"
import { Layer } from "effect"
import { afterAll, describe, it } from "vitest"
import * as InputProperties from "./InputProperties.js"

const database = (await TestDatabase.isAvailable()) ? await TestDatabase.create() : undefined
afterAll(() => database?.drop())

if (database === undefined) {
  describe.skip(`input properties on PostgreSQL (${TestDatabase.skipReason})`, () => {
    it("needs a server", () => undefined)
  })
} else {
  InputProperties.run("PostgreSQL", Layer.orDie(PostgresStorage.layer({ url: database.url, maxConnections: 4 })))
}
