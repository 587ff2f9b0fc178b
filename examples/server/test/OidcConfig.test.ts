/**
 * The single sign-on settings of the example server (issue 26):
 * HOSTING_OIDC_ISSUER with HOSTING_OIDC_CLIENT_ID, the secret given or read
 * from the file HOSTING_OIDC_CLIENT_SECRET_FILE names, and a refusal that
 * names the variable for every setting the server cannot start with.
 */
import { ConfigProvider, Effect, Either, Redacted } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { config } from "../src/ServerConfig.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-oidc-config-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.either(Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(env))))))

describe("example server: single sign-on settings", () => {
  it("off without an issuer; on with an issuer and a client id, the secret given or read from its file", () => {
    expect(Either.getOrThrow(read({})).oidc).toBeUndefined()
    const plain = Either.getOrThrow(read({ HOSTING_OIDC_ISSUER: "https://idp.example", HOSTING_OIDC_CLIENT_ID: "hosting" })).oidc!
    expect([plain.issuer, plain.clientId, plain.clientSecret]).toEqual(["https://idp.example", "hosting", undefined])
    const file = join(dir, "secret")
    writeFileSync(file, "from-the-file\n")
    const fromFile = Either.getOrThrow(read({
      HOSTING_OIDC_ISSUER: "http://127.0.0.1:9000",
      HOSTING_OIDC_CLIENT_ID: "hosting",
      HOSTING_OIDC_CLIENT_SECRET_FILE: file
    })).oidc!
    expect(Redacted.value(fromFile.clientSecret!)).toBe("from-the-file")
    const given = Either.getOrThrow(read({ HOSTING_OIDC_ISSUER: "https://idp.example", HOSTING_OIDC_CLIENT_ID: "hosting", HOSTING_OIDC_CLIENT_SECRET: "s3cret-value" })).oidc!
    expect(Redacted.value(given.clientSecret!)).toBe("s3cret-value")
    // The secret never shows when the settings are printed.
    expect(`${String(given.clientSecret)} ${JSON.stringify(given)}`).not.toContain("s3cret-value")
  })

  it("refuses, naming the variable: no client id, an issuer on plain http elsewhere than loopback, both secrets, a missing file", () => {
    const refusal = (env: Record<string, string>) => {
      const result = read(env)
      expect(Either.isLeft(result), JSON.stringify(env)).toBe(true)
      return String(Either.isLeft(result) ? result.left : "")
    }
    expect(refusal({ HOSTING_OIDC_ISSUER: "https://idp.example" })).toContain("HOSTING_OIDC_CLIENT_ID")
    expect(refusal({ HOSTING_OIDC_ISSUER: "http://idp.example", HOSTING_OIDC_CLIENT_ID: "h" })).toContain("HOSTING_OIDC_ISSUER")
    expect(refusal({ HOSTING_OIDC_ISSUER: "not a url", HOSTING_OIDC_CLIENT_ID: "h" })).toContain("HOSTING_OIDC_ISSUER")
    expect(refusal({
      HOSTING_OIDC_ISSUER: "https://idp.example",
      HOSTING_OIDC_CLIENT_ID: "h",
      HOSTING_OIDC_CLIENT_SECRET: "a",
      HOSTING_OIDC_CLIENT_SECRET_FILE: join(dir, "secret")
    })).toContain("HOSTING_OIDC_CLIENT_SECRET_FILE")
    expect(refusal({
      HOSTING_OIDC_ISSUER: "https://idp.example",
      HOSTING_OIDC_CLIENT_ID: "h",
      HOSTING_OIDC_CLIENT_SECRET_FILE: join(dir, "missing")
    })).toContain("cannot read")
  })
})
