/**
 * Single sign-on through the dashboard in Chromium (issue 26): a real OpenID
 * provider (`oidc-provider`) on loopback, the example server configured with
 * it; the sign-in page offers it, the provider's login and consent forms are
 * filled as a person would, and the browser comes back to the page the
 * sign-in began on, signed in as a user made from the ID token's claims.
 * The device approval page offers it too, and comes back to its code.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import * as OidcProvider from "../../../packages/http/test/OidcProvider.js"
import {
  describeInBrowser,
  distDir,
  ensureBuilt,
  launchBrowser,
  type Server,
  startServer
} from "./support.js"

describeInBrowser("single sign-on in Chromium", () => {
  let provider: OidcProvider.TestProvider
  let server: Server
  let browser: Browser

  beforeAll(async () => {
    await ensureBuilt()
    provider = await OidcProvider.start({
      ada: { sub: "ada", email: "ada@example.com", name: "Ada Lovelace", preferred_username: "ada" }
    })
    server = await startServer({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_DASHBOARD: distDir,
      HOSTING_OIDC_ISSUER: provider.issuer,
      HOSTING_OIDC_CLIENT_ID: provider.clientId,
      HOSTING_OIDC_CLIENT_SECRET: provider.clientSecret
    })
    provider.register(`${server.api}/oidc/callback`)
    browser = await launchBrowser()
  }, 240_000)

  afterAll(async () => {
    await browser?.close()
    await server?.stop()
    await provider?.close()
  })

  /** Fills the provider's development login form, then approves its consent form. */
  const passProvider = async (page: Page, login: string) => {
    await page.locator("input[name=login]").fill(login)
    await page.locator("input[name=password]").fill("anything")
    await page.locator("button[type=submit]").click()
    await page.locator("button[type=submit]").click()
  }

  it("the sign-in page's single sign-on comes back to the page it began on, signed in as the provider's user", async () => {
    const context = await browser.newContext({ locale: "en-US", timezoneId: "UTC" })
    context.setDefaultTimeout(15_000)
    const page = await context.newPage()
    await page.goto(`${server.origin}/signin?next=${encodeURIComponent("/tokens")}`)
    await page.getByRole("link", { name: "Sign in with single sign-on" }).click()
    await page.waitForURL((url) => url.origin === provider.issuer)
    await passProvider(page, "ada")
    await page.waitForURL(`${server.origin}/tokens`)
    await page.getByRole("button", { name: "Sign out" }).waitFor()
    await expect.poll(() => page.locator("header").textContent()).toContain("Ada Lovelace")
    const session = await page.evaluate(async () => (await fetch("/api/v1/session")).json())
    expect(session.user).toEqual({ id: "ada", name: "Ada Lovelace" })
    await context.close()
  }, 60_000)

  it("the device approval page's single sign-on comes back to the code, ready to approve", async () => {
    const started = await fetch(`${server.api}/oauth/device/code`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: "hosting-cli" })
    })
    const { user_code, verification_uri_complete } = await started.json() as { user_code: string; verification_uri_complete: string }
    const context = await browser.newContext({ locale: "en-US", timezoneId: "UTC" })
    context.setDefaultTimeout(15_000)
    const page = await context.newPage()
    await page.goto(verification_uri_complete)
    await page.getByRole("link", { name: "Sign in with single sign-on" }).click()
    await passProvider(page, "ada")
    await page.waitForURL((url) => url.pathname === "/api/v1/device" && url.searchParams.get("user_code") === user_code)
    await page.getByRole("button", { name: "Approve" }).click()
    await expect.poll(() => page.textContent("body")).toContain("approved")
    await context.close()
  }, 60_000)
})
