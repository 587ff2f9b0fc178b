/**
 * `hosting login` through the device flow of the example server, approved
 * (or denied) on its HTML approval page with plain form posts, then
 * `hosting logout`; and the profile file that keeps the token.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Running, start, writeFixtures } from "../../../examples/server/test/process.js"
import { runCli, spawnCli } from "./cli.js"

// Each run of the binary starts Node and tsx: a few seconds on a small machine.
const timeout = 90_000

const dir = mkdtempSync(join(tmpdir(), "hosting-cli-login-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

/** Approves or denies a user code as alice, the way a browser does: sign in on the page, then post the decision with the cookie and the form's CSRF value. */
const decide = async (base: string, userCode: string, decision: "approve" | "deny") => {
  const page = await fetch(`${base}/device?user_code=${encodeURIComponent(userCode)}`)
  expect(page.status).toBe(200)
  const signedIn = await fetch(`${base}/device/session`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: form({ token: "alice-token", user_code: userCode })
  })
  expect(signedIn.status).toBe(200)
  const cookie = signedIn.headers.getSetCookie().map((c) => c.split(";")[0]!).find((c) => c.startsWith("hosting_session="))
  expect(cookie).toBeDefined()
  const csrf = /name="csrf"\s+value="([^"]+)"/.exec(await signedIn.text())?.[1]
  expect(csrf).toBeDefined()
  const decided = await fetch(`${base}/device`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie! },
    body: form({ user_code: userCode, decision, csrf: csrf! })
  })
  expect(decided.status).toBe(200)
}

/**
 * A device-flow server that answers each device code with a script of token
 * answers, and records when each poll came.
 */
const scriptedServer = async (scripts: Record<string, ReadonlyArray<string>>) => {
  const polls: Array<{ code: string; at: number }> = []
  let next = 0
  const codes = Object.keys(scripts)
  const server = createServer((request, response) => {
    let body = ""
    request.on("data", (d) => (body += d))
    request.on("end", () => {
      const json = (status: number, value: unknown) => {
        response.writeHead(status, { "content-type": "application/json" })
        response.end(JSON.stringify(value))
      }
      if (request.url === "/api/v1/oauth/device/code") {
        const code = codes[next++ % codes.length]!
        return json(200, {
          device_code: code,
          user_code: "BCDF-GHJK",
          verification_uri: "http://127.0.0.1/device",
          verification_uri_complete: "http://127.0.0.1/device?user_code=BCDF-GHJK",
          expires_in: 60,
          interval: 1
        })
      }
      if (request.url === "/api/v1/oauth/token") {
        const code = new URLSearchParams(body).get("device_code")!
        polls.push({ code, at: Date.now() })
        const answer = scripts[code]![polls.filter((p) => p.code === code).length - 1] ?? "expired_token"
        if (answer === "token") return json(200, { access_token: `token-of-${code}`, token_type: "Bearer", expires_in: 3600 })
        return json(400, { error: answer, error_description: `the answer is ${answer}`, details: `the answer is ${answer}` })
      }
      if (request.url === "/api/v1/me") {
        return json(200, { user: { id: "carol", name: "Carol" }, accounts: [] })
      }
      json(404, { error: "not_found", details: "No such route." })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/api/v1`,
    polls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("hosting login against a scripted device-flow server", () => {
  it("polls at the interval, adds 5 s after slow_down, and stops on expired_token with exit 2", async () => {
    const fake = await scriptedServer({ slow: ["authorization_pending", "slow_down", "token"], expired: ["expired_token"] })
    try {
      const configDir = join(dir, "config-scripted")
      const signedIn = await runCli(["login", "--base-url", fake.baseUrl, "--json"], { configDir })
      expect(signedIn.code).toBe(0)
      expect(JSON.parse(signedIn.stdout)).toMatchObject({ profile: "default", user: { id: "carol" } })
      const [first, second, third] = fake.polls.map((p) => p.at)
      expect(second! - first!).toBeGreaterThanOrEqual(900)
      expect(second! - first!).toBeLessThan(4000)
      // slow_down: the interval grew from 1 s to 6 s.
      expect(third! - second!).toBeGreaterThanOrEqual(5900)
      expect(JSON.parse(readFileSync(join(configDir, "config.json"), "utf8")).profiles.default.token).toBe("token-of-slow")

      const expired = await runCli(["login", "--base-url", fake.baseUrl], { configDir: join(dir, "config-expired") })
      expect(expired.code).toBe(2)
      expect(expired.stderr).toContain("(expired_token)")
    } finally {
      await fake.close()
    }
  }, timeout)
})

describe("hosting login / logout", () => {
  let server: Running
  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DEVICE_INTERVAL_S: "1"
    })
  })
  afterAll(async () => {
    await server?.stop()
  }, timeout)

  it("signs in with the device flow, keeps the token in a 0600 profile, uses it, and logout revokes it", async () => {
    const configDir = join(dir, "config")
    const login = spawnCli(["login", "--base-url", server.baseUrl], { configDir })
    const [, userCode] = await login.waitFor(/^\s+([A-Z]{4}-[A-Z]{4})$/m)
    expect(login.output().stderr).toContain(`${server.baseUrl}/device`)
    expect(login.output().stderr).toContain(`user_code=${userCode}`)
    await decide(server.baseUrl, userCode!, "approve")
    const signedIn = await login.result()
    expect(signedIn.code).toBe(0)
    expect(signedIn.stdout).toBe(`Signed in to ${server.baseUrl} as Alice (alice); saved in profile "default".\n`)

    const file = join(configDir, "config.json")
    expect(statSync(configDir).mode & 0o777).toBe(0o700)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const profile = JSON.parse(readFileSync(file, "utf8")).profiles.default
    expect(profile.base_url).toBe(server.baseUrl)
    expect(profile.token).toEqual(expect.any(String))
    expect(profile.token).not.toBe("alice-token")

    // The profile alone: its base address and its token.
    const me = await runCli(["me", "--json"], { configDir })
    expect(me.code).toBe(0)
    expect(JSON.parse(me.stdout)).toMatchObject({ user: { id: "alice" }, accounts: [{ name: "acme", role: "owner" }] })
    expect((await runCli(["agents", "list"], { configDir })).code).toBe(0)

    const logout = await runCli(["logout"], { configDir })
    expect(logout.code).toBe(0)
    expect(JSON.parse(readFileSync(file, "utf8")).profiles.default).toEqual({ base_url: server.baseUrl })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const old = await fetch(`${server.baseUrl}/me`, { headers: { authorization: `Bearer ${profile.token}` } })
    expect(old.status).toBe(401)
    const after = await runCli(["me"], { configDir })
    expect(after.code).toBe(2)
  }, timeout)

  it("login --scope asks for scopes: the token reads, and a write beyond them is refused with insufficient_scope", async () => {
    const configDir = join(dir, "config-scoped")
    const login = spawnCli(["login", "--base-url", server.baseUrl, "--scope", "read"], { configDir })
    const [, userCode] = await login.waitFor(/^\s+([A-Z]{4}-[A-Z]{4})$/m)
    const page = await fetch(`${server.baseUrl}/device?user_code=${encodeURIComponent(userCode!)}`)
    expect(page.status).toBe(200)
    await decide(server.baseUrl, userCode!, "approve")
    expect((await login.result()).code).toBe(0)
    expect((await runCli(["me"], { configDir })).code).toBe(0)
    const refused = await runCli(["accounts", "create", "scoped-login"], { configDir })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("insufficient_scope")
  }, timeout)

  it("a denied login stops with exit 2 and a clear message, and stores nothing", async () => {
    const configDir = join(dir, "config-denied")
    const login = spawnCli(["login", "--base-url", server.baseUrl, "--profile", "work"], { configDir })
    const [, userCode] = await login.waitFor(/^\s+([A-Z]{4}-[A-Z]{4})$/m)
    await decide(server.baseUrl, userCode!, "deny")
    const denied = await login.result()
    expect(denied.code).toBe(2)
    expect(denied.stderr).toContain("error: The sign-in was denied on the approval page. (access_denied)")
    expect(() => statSync(join(configDir, "config.json"))).toThrow()
  }, timeout)

  it("a profile's token goes only to the profile's own server, never to another --base-url", async () => {
    const configDir = join(dir, "config-elsewhere")
    const login = spawnCli(["login", "--base-url", server.baseUrl], { configDir })
    const [, userCode] = await login.waitFor(/^\s+([A-Z]{4}-[A-Z]{4})$/m)
    await decide(server.baseUrl, userCode!, "approve")
    expect((await login.result()).code).toBe(0)

    const seen: Array<string | undefined> = []
    const other = createServer((request, response) => {
      seen.push(request.headers.authorization)
      response.writeHead(401, { "content-type": "application/json" })
      response.end(JSON.stringify({ error: "unauthorized", details: "Who are you?" }))
    })
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve))
    try {
      const port = (other.address() as { port: number }).port
      const base = `http://127.0.0.1:${port}/api/v1`
      const elsewhere = await runCli(["me", "--base-url", base], { configDir })
      expect(elsewhere.code).toBe(2)
      expect(seen).toEqual([undefined])
      // Said, not silently dropped: the token is withheld, and the answer means "not signed in" there.
      expect(elsewhere.stderr).toBe(
        `note: the token of profile "default" is for ${server.baseUrl}, not ${base}; it is not sent there\n` +
          `error: not signed in to ${base} (unauthorized)\n` +
          "hint: sign in with `hosting login`, or pass --token / set HOSTING_TOKEN\n"
      )
    } finally {
      await new Promise<void>((resolve) => other.close(() => resolve()))
    }
  }, timeout)
})
