/**
 * Device login as a standard OAuth client sees it: the `openid-client`
 * library discovers the server (RFC 8414), starts a device login (RFC 8628),
 * polls while a person approves it through the page's HTML forms, uses the
 * token, and revokes it (RFC 7009).
 */
import * as oauth from "openid-client"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, decideOnPage, type Running, start, writeFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-device-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("device login with openid-client", () => {
  let server: Running

  beforeAll(async () => {
    server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_FIXTURES: writeFixtures(dir), HOSTING_DEVICE_INTERVAL_S: "1" })
  })
  afterAll(() => server?.stop())

  it("discovers the server, logs in through the device flow with an approval on the page, uses and revokes the token", async () => {
    const config = await oauth.discovery(new URL(server.baseUrl), "hosting-cli", undefined, oauth.None(), {
      algorithm: "oauth2",
      execute: [oauth.allowInsecureRequests]
    })
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${server.baseUrl}/oauth/device/code`)
    const device = await oauth.initiateDeviceAuthorization(config, {})
    expect(device.verification_uri).toBe(`${server.baseUrl}/device`)
    expect(device.interval).toBe(1)

    const tokens = oauth.pollDeviceAuthorizationGrant(config, device)
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const page = await decideOnPage(server.baseUrl, "bob-token", device.user_code, "approve")
    expect(page).toMatchObject({ status: 200, signInForm: true })
    expect(page.html).toContain("Device approved")
    const granted = await tokens
    expect(granted.token_type.toLowerCase()).toBe("bearer")
    expect(granted.expiresIn()).toBeGreaterThan(29 * 24 * 3600)

    const me = await call(server, "GET", "/me", granted.access_token)
    expect([me.status, me.body.user.id]).toEqual([200, "bob"])

    await oauth.tokenRevocation(config, granted.access_token)
    expect((await call(server, "GET", "/me", granted.access_token)).status).toBe(401)
    // The platform token used on the page still works: only the device token was revoked.
    expect((await call(server, "GET", "/me", "bob-token")).status).toBe(200)
  }, 30_000)

  it("a denied login ends the client's polling with access_denied", async () => {
    const config = await oauth.discovery(new URL(server.baseUrl), "hosting-cli", undefined, oauth.None(), {
      algorithm: "oauth2",
      execute: [oauth.allowInsecureRequests]
    })
    const device = await oauth.initiateDeviceAuthorization(config, {})
    const polling = oauth.pollDeviceAuthorizationGrant(config, device).then(
      () => "granted",
      (error: unknown) => (error as { error?: string }).error ?? String(error)
    )
    expect((await decideOnPage(server.baseUrl, "alice-token", device.user_code, "deny")).html).toContain("Device denied")
    expect(await polling).toBe("access_denied")
  }, 30_000)
})
