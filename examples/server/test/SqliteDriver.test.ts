/**
 * better-sqlite3 is loaded only when the database is SQLite (issue 27): a
 * server on Postgres starts where the driver cannot be loaded at all (an
 * image without it, or without the libraries its native addon needs). The
 * server runs with a module hook that refuses better-sqlite3 to `import`
 * and `require` alike; on SQLite the same hook stops it, so the hook bites.
 */
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { runToExit, start } from "./process.js"

const pgAvailable = await TestDatabase.isAvailable()

const dir = mkdtempSync(join(tmpdir(), "hosting-sqlite-driver-"))
const databases: Array<TestDatabase.TestDatabase> = []
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()))
  rmSync(dir, { recursive: true, force: true })
})

const refusal = "better-sqlite3 is refused by this test's module hook"

/**
 * The hook: ES module resolution (its hooks run off the main thread, from a
 * module of their own) and CommonJS resolution both refuse the driver.
 */
const refuse = `const refused = (specifier) => specifier === "better-sqlite3" || specifier.startsWith("better-sqlite3/")
const fail = () => Object.assign(new Error(${JSON.stringify(refusal)}), { code: "ERR_MODULE_NOT_FOUND" })`
writeFileSync(
  join(dir, "resolve.mjs"),
  `${refuse}
export async function resolve(specifier, context, next) {
  if (refused(specifier)) throw fail()
  return next(specifier, context)
}
`
)
const hook = join(dir, "refuse-better-sqlite3.mjs")
writeFileSync(
  hook,
  `import Module, { register } from "node:module"
${refuse}
register("./resolve.mjs", import.meta.url)
const resolveFilename = Module._resolveFilename
Module._resolveFilename = function (request, ...rest) {
  if (refused(request)) throw fail()
  return resolveFilename.call(this, request, ...rest)
}
`
)
const withoutDriver = { NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --import=${pathToFileURL(hook).href}`.trim() }

describe("better-sqlite3 only when the database is SQLite", () => {
  it("on SQLite, a server that cannot load better-sqlite3 does not start (the hook bites)", async () => {
    const { code, output } = await runToExit({ ...withoutDriver, HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`, HOSTING_OBJECT_STORE: "memory:" })
    expect(code).not.toBe(0)
    expect(output).toContain(refusal)
  })

  it.skipIf(!pgAvailable)(
    `on Postgres, a server that cannot load better-sqlite3 starts, is ready, and stops cleanly${pgAvailable ? "" : ` (skipped: ${TestDatabase.skipReason})`}`,
    async () => {
      const database = await TestDatabase.create()
      databases.push(database)
      const server = await start({ ...withoutDriver, HOSTING_DATABASE_URL: database.url, HOSTING_OBJECT_STORE: "memory:" }, 30_000)
      try {
        const ready = await fetch(new URL("/readyz", server.baseUrl))
        expect(ready.status).toBe(200)
        expect(server.output()).not.toContain(refusal)
      } finally {
        expect(await server.stop()).toBe(0)
      }
    }
  )
})
