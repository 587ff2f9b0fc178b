/**
 * The `_FILE` rule of the example server's configuration (issue 27): any
 * variable NAME may be given as NAME_FILE, the path of a file holding its
 * value (a mounted Kubernetes Secret); one trailing line break is dropped;
 * both set, or a file that cannot be read, stops the start with one line
 * naming the variable.
 */
import { ConfigProvider, Effect, Either, Redacted } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { config } from "../src/ServerConfig.js"
import { runToExit } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-value-files-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))))

const fileWith = (name: string, text: string) => {
  const file = join(dir, name)
  writeFileSync(file, text)
  return file
}

const refusal = (env: Record<string, string>) => {
  const result = read(env)
  expect(Either.isLeft(result), JSON.stringify(env)).toBe(true)
  return String(Either.isLeft(result) ? result.left : "")
}

describe("example server: values read from files (NAME_FILE)", () => {
  it("reads the database URL, the S3 keys and any other variable from the file NAME_FILE names, without its final line break", () => {
    const loaded = Either.getOrThrow(read({
      HOSTING_DATABASE_URL_FILE: fileWith("database-url", "postgres://hosting:pw@db.example:5432/hosting\n"),
      AWS_ACCESS_KEY_ID_FILE: fileWith("access-key-id", "AKIDEXAMPLE\r\n"),
      AWS_SECRET_ACCESS_KEY_FILE: fileWith("secret-access-key", "wJalrXUtnFEMI/K7MDENG\n"),
      HOSTING_PORT_FILE: fileWith("port", "9090"),
      HOSTING_METRICS_FILE: fileWith("metrics", "off\n")
    }))
    expect(loaded.database).toEqual({ _tag: "Postgres", url: "postgres://hosting:pw@db.example:5432/hosting" })
    expect(loaded.s3.accessKeyId).toBe("AKIDEXAMPLE")
    expect(Redacted.value(loaded.s3.secretAccessKey!)).toBe("wJalrXUtnFEMI/K7MDENG")
    expect([loaded.port, loaded.metrics]).toEqual([9090, false])
    // Only one line break goes: a value that ends in blank lines keeps the rest, and spaces stay.
    const kept = Either.getOrThrow(read({ AWS_ACCESS_KEY_ID_FILE: fileWith("two-breaks", " key \n\n") }))
    expect(kept.s3.accessKeyId).toBe(" key \n")
  })

  it("takes the variable itself when NAME_FILE is unset or empty", () => {
    const loaded = Either.getOrThrow(read({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_DATABASE_URL_FILE: "" }))
    expect(loaded.database).toEqual({ _tag: "Sqlite", filename: ":memory:" })
    expect(Either.getOrThrow(read({})).database).toEqual({ _tag: "Sqlite", filename: "./.hosting/hosting.db" })
  })

  it("refuses both set, a file that cannot be read and a bad value in a file, naming the variable", () => {
    const url = fileWith("url", "sqlite::memory:")
    const both = refusal({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_DATABASE_URL_FILE: url })
    expect(both).toContain("HOSTING_DATABASE_URL_FILE")
    expect(both).toContain("set it or HOSTING_DATABASE_URL, not both")
    const missing = refusal({ AWS_SECRET_ACCESS_KEY_FILE: join(dir, "no-such-file") })
    expect(missing).toContain("AWS_SECRET_ACCESS_KEY_FILE")
    expect(missing).toContain(`cannot read ${join(dir, "no-such-file")}`)
    expect(refusal({ HOSTING_DATABASE_URL_FILE: dir })).toContain("cannot read")
    const bad = refusal({ HOSTING_PORT_FILE: fileWith("bad-port", "eighty\n") })
    expect(bad).toContain("HOSTING_PORT_FILE")
    expect(refusal({ HOSTING_DATABASE_URL_FILE: fileWith("bad-url", "mysql://x\n") })).toContain("HOSTING_DATABASE_URL")
  })

  it("the server process: migrates the database its file names; a missing file stops the start with exit 1 and one line", async () => {
    const database = join(dir, "migrated.db")
    const migrated = await runToExit({ HOSTING_DATABASE_URL_FILE: fileWith("server-url", `sqlite:${database}\n`) }, 30_000, ["migrate"])
    expect(migrated.output).toContain("migrate: the schema is at migration")
    expect(migrated.code).toBe(0)
    const refused = await runToExit({ HOSTING_DATABASE_URL_FILE: join(dir, "absent-url") })
    expect(refused.code).toBe(1)
    expect(refused.output).toMatch(/^hosting: cannot start: configuration: .*HOSTING_DATABASE_URL_FILE.*cannot read/m)
  })
})
