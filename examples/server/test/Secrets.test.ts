/**
 * Secrets (issue #12): tokens are stored only as hashes, never logged and
 * never echoed in an answer. A run of the example server on a SQLite file
 * goes through bad tokens, session sign-in, a device login, token revocation
 * and client errors; then the database file (with its write-ahead log) is
 * searched byte for byte for every credential the run saw, and so is
 * everything the server printed, which must also hold no SQL text, no stack
 * trace line and no path of the server's code.
 */
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decideOnPage, type Running, start } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-secrets-"))
const filename = join(dir, "hosting.db")
const secret = (label: string) => `${label}-${randomBytes(18).toString("base64url")}`
const aliceToken = secret("alice")
const bobToken = secret("bob")
const badTokens = [secret("wrong"), secret("expired"), `x${randomBytes(3000).toString("hex")}`]

/** Every credential the run handles: none may be stored, printed or echoed in clear. */
const credentials: Array<{ readonly what: string; readonly value: string }> = [
  { what: "alice's platform token", value: aliceToken },
  { what: "bob's platform token", value: bobToken },
  ...badTokens.map((value, i) => ({ what: `bad token ${i}`, value: value.slice(0, 64) }))
]

/** Every error answer of the run, to check that none echoes a credential. */
const errorBodies: Array<{ readonly route: string; readonly status: number; readonly text: string }> = []

let server: Running

beforeAll(async () => {
  const fixtures = join(dir, "fixtures.json")
  writeFileSync(fixtures, JSON.stringify({
    users: [{ id: "alice", name: "Alice", tokens: [aliceToken] }, { id: "bob", name: "Bob", tokens: [bobToken] }],
    accounts: [{ name: "acme", members: [{ user: "alice", role: "owner" }, { user: "bob", role: "member" }] }]
  }))
  server = await start({
    HOSTING_DATABASE_URL: `sqlite:${filename}`,
    HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
    HOSTING_FIXTURES: fixtures,
    HOSTING_DEVICE_INTERVAL_S: "1"
  }, 30_000)
}, 40_000)

afterAll(async () => {
  await server?.stop("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

/** Calls the server; keeps the answer's text when it is an error. */
const send = async (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: init.body }),
    signal: AbortSignal.timeout(15_000)
  })
  const text = await response.text()
  if (response.status >= 400) errorBodies.push({ route: `${method} ${path.slice(0, 60)}`, status: response.status, text })
  return { status: response.status, headers: response.headers, text, json: (() => {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  })() }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const json = { "content-type": "application/json" }
const form = { "content-type": "application/x-www-form-urlencoded" }

describe("secrets: stored hashed, never logged, never echoed", () => {
  it("a run through bad tokens, session sign-in, device login, revocation and client errors", async () => {
    // Bad credentials, in every place one can be sent.
    for (const token of badTokens) {
      expect((await send("GET", "/me", { headers: bearer(token) })).status).toBe(401)
      expect((await send("GET", "/agents", { headers: bearer(token) })).status).toBe(401)
      // An overlong token fails the body's schema (400) before any lookup; the others are unknown (401).
      expect([400, 401]).toContain((await send("POST", "/session", { headers: json, body: JSON.stringify({ token }) })).status)
      expect((await send("GET", "/me", { headers: { cookie: `hosting_session=${token}` } })).status).toBe(401)
    }
    expect((await send("GET", "/me", { headers: { authorization: `Basic ${aliceToken}` } })).status).toBe(401)

    // A browser session: its cookie is a token of its own.
    const signedIn = await send("POST", "/session", { headers: json, body: JSON.stringify({ token: aliceToken }) })
    expect(signedIn.status).toBe(200)
    const session = /hosting_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1]
    expect(session).toBeDefined()
    credentials.push({ what: "the session cookie", value: session! })
    expect(signedIn.text).not.toContain(session!)
    expect(signedIn.text).not.toContain(aliceToken)
    const cookie = { cookie: `hosting_session=${session}` }
    expect((await send("GET", "/me", { headers: cookie })).status).toBe(200)
    // A state-changing request with the cookie but without its CSRF value.
    expect((await send("PUT", "/accounts/acme", { headers: { ...cookie, ...json }, body: JSON.stringify({ name: "acme2" }) })).status)
      .toBe(403)

    // A device login, approved on the page, then the token used and revoked.
    const code = await send("POST", "/oauth/device/code", { headers: form, body: new URLSearchParams({ client_id: "cli" }).toString() })
    expect(code.status).toBe(200)
    credentials.push({ what: "the device code", value: code.json.device_code })
    const poll = () =>
      send("POST", "/oauth/token", {
        headers: form,
        body: new URLSearchParams({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: code.json.device_code })
          .toString()
      })
    expect((await poll()).json.error).toBe("authorization_pending")
    const decided = await decideOnPage(server.baseUrl, aliceToken, code.json.user_code, "approve")
    expect(decided.status).toBe(200)
    let granted = await poll()
    for (let i = 0; i < 10 && granted.status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_100))
      granted = await poll()
    }
    expect(granted.status, granted.text).toBe(200)
    const accessToken: string = granted.json.access_token
    credentials.push({ what: "the device login's access token", value: accessToken })
    expect((await send("GET", "/me", { headers: bearer(accessToken) })).status).toBe(200)
    // The used code gives no second token, and says nothing of it.
    expect((await poll()).status).toBe(400)
    expect((await send("POST", "/oauth/revoke", { headers: form, body: new URLSearchParams({ token: accessToken }).toString() })).status)
      .toBe(200)
    expect((await send("GET", "/me", { headers: bearer(accessToken) })).status).toBe(401)

    // Client errors of several kinds.
    expect((await send("GET", "/no/such/route", { headers: bearer(aliceToken) })).status).toBe(404)
    expect((await send("POST", "/agents/acme/x/register", { headers: { ...bearer(aliceToken), ...json }, body: "{not json" })).status)
      .toBe(400)
    expect((await send("POST", "/agents/acme/x/register", { headers: { ...bearer(bobToken), ...json }, body: "{}" })).status).toBe(400)
    expect(
      (await send("POST", "/agents/acme/x/register", {
        headers: { ...bearer(bobToken), ...json },
        body: JSON.stringify({ build_id: "b", registry: "ghcr.io/acme", spec_content: "name: x\n" })
      })).status
    ).toBe(403)
    expect((await send("GET", "/agents/acme/nothing-here", { headers: bearer(aliceToken) })).status).toBe(404)
    expect((await send("DELETE", "/session", { headers: { ...cookie, "x-csrf-token": signedIn.json.csrf } })).status).toBeLessThan(300)
    expect((await send("GET", "/me", { headers: cookie })).status).toBe(401)

    expect(await server.stop()).toBe(0)
  }, 60_000)

  it("the database file and its write-ahead log hold no credential in clear, only SHA-256 hashes", () => {
    const files = [filename, `${filename}-wal`].filter((f) => existsSync(f))
    const bytes = Buffer.concat(files.map((f) => readFileSync(f)))
    expect(bytes.length).toBeGreaterThan(0)
    for (const { what, value } of credentials) {
      expect(bytes.includes(Buffer.from(value)), `${what} is stored in clear`).toBe(false)
    }
    // The platform tokens are there as their hashes: the search above looks in the right place.
    for (const token of [aliceToken, bobToken]) {
      expect(bytes.includes(Buffer.from(createHash("sha256").update(token).digest("hex")))).toBe(true)
    }
  })

  it("no answer echoes a credential", () => {
    expect(errorBodies.length).toBeGreaterThan(10)
    for (const { route, status, text } of errorBodies) {
      for (const { what, value } of credentials) expect(text.includes(value), `${route} (${status}) shows ${what}`).toBe(false)
      if (status >= 400 && !route.includes("/device")) {
        const body = JSON.parse(text)
        expect(typeof body.error, `${route} (${status}): ${text}`).toBe("string")
        expect(typeof body.details, `${route} (${status}): ${text}`).toBe("string")
      }
    }
  })

  it("the server's output holds no credential, SQL text, stack trace or path of its code", () => {
    const output = server.output()
    expect(output).toContain("listening on")
    for (const { what, value } of credentials) expect(output.includes(value), `the output shows ${what}`).toBe(false)
    expect(output).not.toMatch(/\b(SELECT|INSERT INTO|UPDATE|DELETE FROM)\b .*\b(FROM|SET|VALUES|WHERE)\b/)
    expect(output).not.toMatch(/^\s+at /m)
    expect(output).not.toContain("node_modules")
    expect(output).not.toContain("file://")
    // Paths the operator configured (the fixtures file) may be named; the code's own never.
    expect(output).not.toContain(process.cwd())
    expect(output).not.toMatch(/\.(ts|js|mjs):\d+/)
  })
})
