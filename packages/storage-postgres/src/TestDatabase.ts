/**
 * Throwaway databases for tests: a fresh database per test run on a
 * PostgreSQL server (by default 127.0.0.1:5432, user postgres, trust auth, as
 * this project's machines and CI run it), dropped afterwards. Suites ask
 * `isAvailable()` first and skip, with `skipReason`, when no server answers.
 */
import pg from "pg"

/** The server the tests use; `HOSTING_TEST_PG_URL` names another one. */
export const serverUrl = process.env["HOSTING_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test"

const withClient = async <A>(f: (client: pg.Client) => Promise<A>, connectionString = serverUrl): Promise<A> => {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 3000 })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/**
 * Whether the server answers. With `HOSTING_TEST_PG_REQUIRED=1` (CI, once it
 * started the server) an unanswering server is an error, never a skip.
 */
export const isAvailable = (): Promise<boolean> =>
  withClient(async (c) => {
    await c.query("SELECT 1")
    return true
  }).catch((error: unknown) => {
    if (process.env["HOSTING_TEST_PG_REQUIRED"] === "1") {
      throw new Error(`HOSTING_TEST_PG_REQUIRED=1 but ${serverUrl} does not answer: ${String(error)}`)
    }
    return false
  })

export const skipReason = `no PostgreSQL server answers at ${serverUrl}: start it (pg_ctlcluster <version> main start) to run these tests`

/** A throwaway database, and the means to take it away from its clients for a while. */
export interface TestDatabase {
  readonly url: string
  readonly drop: () => Promise<void>
  /**
   * Makes the database unreachable, as an outage does: new connections are
   * refused and every open one is terminated. Resolves with how many were.
   */
  readonly refuseConnections: () => Promise<number>
  /** Ends `refuseConnections`: the database takes connections again. */
  readonly acceptConnections: () => Promise<void>
  /** Runs one statement in the database on a connection of its own; resolves with its rows. */
  readonly query: (text: string) => Promise<Array<Record<string, unknown>>>
}

/** Creates an empty database; resolves with its URL and functions that drop it or cut it off. */
export const create = async (): Promise<TestDatabase> => {
  const name = `hosting_test_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await withClient((c) => c.query(`CREATE DATABASE ${name}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: () => withClient((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
    refuseConnections: () =>
      withClient(async (c) => {
        await c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`)
        const terminated = await c.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [name]
        )
        return terminated.rowCount ?? 0
      }),
    acceptConnections: () => withClient((c) => c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`)).then(() => undefined),
    query: (text) => withClient(async (c) => (await c.query(text)).rows, url.toString())
  }
}
