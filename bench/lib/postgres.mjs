// A fresh Postgres database per run, for the workloads that can put the
// example server on Postgres: created with psql on HOSTING_BENCH_POSTGRES
// (default postgres://postgres@127.0.0.1:5432) and dropped after the run,
// connections and all.
import { spawnSync } from "node:child_process"

/** The Postgres server the bench creates its databases on (no database in the URL). */
export const postgresServer = (process.env.HOSTING_BENCH_POSTGRES ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "")

const psql = (sql) => {
  const result = spawnSync("psql", [`${postgresServer}/postgres`, "-v", "ON_ERROR_STOP=1", "-Atqc", sql], {
    encoding: "utf8",
    timeout: 60_000
  })
  if (result.error) {
    throw new Error(result.error.code === "ENOENT"
      ? "psql not found: the Postgres client creates and drops the bench's database"
      : `psql: ${result.error.message}`)
  }
  if (result.status !== 0) throw new Error(`psql on ${postgresServer}: ${sql}: ${result.stderr.trim()}`)
  return result.stdout
}

/**
 * Creates an empty database named after `label`; returns its name, its URL
 * and `drop()`, which removes it even while connections to it remain.
 */
export const createDatabase = (label) => {
  const name = `hosting_bench_${label}_${process.pid}_${Date.now().toString(36)}`
  psql(`CREATE DATABASE ${name}`)
  return {
    name,
    url: `${postgresServer}/${name}`,
    drop: () => void psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}
