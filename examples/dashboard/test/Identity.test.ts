/**
 * The identity pages in Chromium, against example servers of their own:
 * a personal access token made on /tokens (its secret shown once, then
 * revoked); an invitation made on the account page and accepted by another
 * signed-in user, whose role is then changed before they are removed; the
 * audit log with its pages; an account deleted after typing its name (and
 * one refused while it runs something); and a new, empty instance set up
 * from the sign-in page with the code its server printed.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import {
  checkAndShoot,
  api,
  describeInBrowser,
  distDir,
  ensureBuilt,
  launchBrowser,
  publishScreenshots,
  type Server,
  startServer,
  writeFixtures
} from "./support.js"

const shots = ["tokens", "invitation", "account-manage", "setup"] as const
type Shot = (typeof shots)[number]

const desktop = { width: 1280, height: 900 }

/** The code an empty instance prints at start: `setup:   XXXXX-XXXXX-XXXXX-XXXXX`. */
const setupCodeIn = (output: string) => /setup: {3}([A-Z0-9]{5}(?:-[A-Z0-9]{5}){3})/.exec(output)?.[1]

describeInBrowser("the identity pages in Chromium", () => {
  let dir = ""
  let server: Server
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** The invitation link of the first invitation, kept to open it again once used. */
  let link = ""
  const pageErrors: Array<string> = []

  /** Checks the page's accessibility basics, then saves its screenshot (support.ts). */
  const shoot = (name: Shot, target: Page = page) => checkAndShoot(target, name)

  const newContext = async () => {
    const made = await browser.newContext({ viewport: desktop, locale: "en-US", timezoneId: "UTC" })
    made.setDefaultTimeout(10_000)
    return made
  }

  /** Signs in on the sign-in page with a token and waits until the page it leads to. */
  const signIn = async (target: Page, origin: string, token: string, next = "/") => {
    await target.goto(`${origin}/signin?next=${encodeURIComponent(next)}`)
    await target.getByLabel("Platform token").fill(token)
    await target.getByRole("button", { name: "Sign in", exact: true }).click()
    await target.waitForURL(`${origin}${next}`)
    await target.getByRole("button", { name: "Sign out" }).waitFor()
  }

  const open = async (path: string) => {
    await page.goto(`${server.origin}${path}`)
    await page.locator("h1").first().waitFor()
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hosting-dashboard-identity-"))
    await ensureBuilt()
    server = await startServer({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      // alice owns acme (which runs dep-1, so deleting it is refused), bob is a member, carol belongs to no account yet.
      HOSTING_FIXTURES: writeFixtures(dir, [{ id: "carol", name: "Carol" }]),
      HOSTING_DASHBOARD: distDir
    })
    browser = await launchBrowser()
    context = await browser.newContext({
      viewport: desktop,
      locale: "en-US",
      timezoneId: "UTC",
      permissions: ["clipboard-read", "clipboard-write"]
    })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    page.on("pageerror", (error) => pageErrors.push(error.message))
    await signIn(page, server.origin, "alice-token")
  }, 240_000)

  afterAll(async () => {
    await browser?.close().catch(() => undefined)
    await server?.stop()
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
    publishScreenshots(shots)
  }, 60_000)

  it("makes a token on /tokens, shows its secret once with a copy button, and revokes it after a confirmation", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Tokens" }).click()
    await page.waitForURL(`${server.origin}/tokens`)
    const form = page.getByRole("region", { name: "New token", exact: true })
    expect(await form.getByLabel("read", { exact: true }).isChecked()).toBe(true)

    // Without a name the form says so and sends nothing.
    await form.getByRole("button", { name: "Create token" }).click()
    expect(await form.getByLabel("Name", { exact: true }).getAttribute("aria-invalid")).toBe("true")

    await form.getByLabel("Name", { exact: true }).fill("ci deploy")
    await form.getByLabel("deploy", { exact: true }).check()
    await form.getByLabel("acme", { exact: true }).check()
    await form.getByLabel("Expires after").selectOption("7")
    await form.getByRole("button", { name: "Create token" }).click()
    const secretField = form.getByLabel("Token secret")
    await secretField.waitFor()
    const secret = await secretField.inputValue()
    expect(secret).toMatch(/^hst_/)
    expect(await form.textContent()).toContain("Shown only now")

    await form.getByRole("button", { name: "Copy token secret" }).click()
    await expect.poll(() => form.getByRole("status").filter({ hasText: /Copied|did not allow/ }).count()).toBe(1)
    // Reading the clipboard back needs a focused page, which a headless run may not have: checked when it can be.
    const copied = await page.evaluate(() => navigator.clipboard.readText().catch(() => undefined))
    if (copied !== undefined) expect(copied).toBe(secret)

    // The secret works as a bearer token, with the scopes and account chosen.
    expect((await api(server, "GET", "/accounts/acme", secret)).status).toBe(200)
    const table = page.getByRole("region", { name: "Tokens table" })
    const row = table.getByRole("row", { name: /ci deploy/ })
    await row.waitFor()
    expect(await row.textContent()).toContain("read, deploy")
    expect(await row.textContent()).toContain("acme")
    await shoot("tokens")

    // Shown once: the page read again has the token in its list, never its secret.
    await page.reload()
    await row.waitFor()
    expect(await page.getByLabel("Token secret").count()).toBe(0)
    expect(await page.locator("main").textContent()).not.toContain(secret)

    await row.getByRole("button", { name: "Revoke token ci deploy" }).click()
    const dialog = page.getByRole("dialog", { name: "Revoke the token?" })
    await dialog.getByRole("button", { name: "Revoke token" }).click()
    await page.getByRole("status").filter({ hasText: "Token ci deploy was revoked." }).waitFor()
    await expect.poll(() => table.getByRole("row", { name: /ci deploy/ }).count()).toBe(0)
    expect((await api(server, "GET", "/accounts/acme", secret)).status).toBe(401)
  }, 60_000)

  it("invites from the account page; another signed-in user opens the link, signs in first, and accepts", async () => {
    await open("/accounts/acme")
    const invitations = page.getByRole("region", { name: "Invitations", exact: true })
    await invitations.getByLabel("Role").selectOption("admin")
    await invitations.getByLabel("E-mail (optional)").fill("carol@example.com")
    await invitations.getByRole("button", { name: "Create invitation" }).click()
    const field = invitations.getByLabel("Invitation link")
    await field.waitFor()
    link = await field.inputValue()
    expect(link).toMatch(new RegExp(`^${server.origin}/invitations/[^/]+$`))
    expect(await invitations.textContent()).toContain("Shown only now")
    const waiting = invitations.getByRole("region", { name: "Waiting invitations table" })
    await waiting.getByRole("cell", { name: "carol@example.com", exact: true }).waitFor()

    const other = await newContext()
    try {
      const carol = await other.newPage()
      carol.on("pageerror", (error) => pageErrors.push(error.message))
      // The page is private: signed out, it asks to sign in and comes back.
      await carol.goto(link)
      await carol.getByRole("heading", { name: "Sign in to continue" }).waitFor()
      await carol.getByRole("main").getByRole("link", { name: "Sign in" }).click()
      await carol.getByLabel("Platform token").fill("carol-token")
      await carol.getByRole("button", { name: "Sign in", exact: true }).click()
      await carol.waitForURL(link)
      await carol.getByRole("heading", { name: "Invitation to an account" }).waitFor()
      await shoot("invitation", carol)
      await carol.getByRole("button", { name: "Accept invitation" }).click()
      await carol.waitForURL(`${server.origin}/accounts/acme`)
      await carol.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account acme" }).waitFor()
      await expect.poll(() => carol.locator("main > p").first().textContent()).toContain("your role: admin")

      // The link is spent: opening it again says so.
      await carol.goto(link)
      await carol.getByRole("button", { name: "Accept invitation" }).click()
      const spent = carol.getByRole("alert")
      await expect.poll(() => spent.textContent()).toContain("404 invitation_not_found")
      expect(await carol.getByRole("main").textContent()).toContain("used, withdrawn or has expired")

      // A fresh invitation to an account carol is in already: 409, and the invitation stays.
      const again = await api(server, "POST", "/accounts/acme/invitations", "alice-token", { role: "member" })
      expect(again.status).toBe(201)
      await carol.goto(again.body.url)
      await carol.getByRole("button", { name: "Accept invitation" }).click()
      await expect.poll(() => carol.getByRole("alert").textContent()).toContain("409 already_member")
      expect(await carol.getByRole("main").textContent()).toContain("member of this account already")
    } finally {
      await other.close()
    }
  }, 60_000)

  it("changes the new member's role, withdraws the invitation left, and removes the member after a confirmation", async () => {
    await open("/accounts/acme")
    const members = page.getByRole("region", { name: "Members", exact: true })
    const carolRow = members.locator('tr[data-member="carol"]')
    await carolRow.waitFor()
    expect(await members.getByLabel("Role of Carol").inputValue()).toBe("admin")
    await members.getByLabel("Role of Carol").selectOption("member")
    await members.getByRole("button", { name: "Set role of Carol" }).click()
    await members.getByRole("status").filter({ hasText: "Carol is now member." }).waitFor()
    await expect.poll(() => members.getByLabel("Role of Carol").inputValue()).toBe("member")

    // The last owner cannot be given another role: the API's sentence is shown.
    await members.getByLabel("Role of Alice").selectOption("admin")
    await members.getByRole("button", { name: "Set role of Alice" }).click()
    await expect.poll(() => members.getByRole("alert").textContent()).toContain("409 last_owner")
    await members.getByLabel("Role of Alice").selectOption("owner")

    const invitations = page.getByRole("region", { name: "Invitations", exact: true })
    const waiting = invitations.getByRole("region", { name: "Waiting invitations table" })
    await waiting.getByRole("button", { name: /^Withdraw the invitation for anyone as member/ }).click()
    await invitations.getByText("No invitation is waiting.").waitFor()

    await members.getByRole("button", { name: "Remove Carol" }).click()
    const dialog = page.getByRole("dialog", { name: "Remove Carol?" })
    await dialog.getByRole("button", { name: "Remove member" }).click()
    await members.getByRole("status").filter({ hasText: "Carol was removed from acme." }).waitFor()
    await expect.poll(() => carolRow.count()).toBe(0)
    expect((await api(server, "GET", "/accounts/acme", "carol-token")).status).toBe(403)
  }, 60_000)

  it("shows the audit log, newest first, with Older and Newer pages of 20", async () => {
    // The tests before wrote 8 entries; 20 more, bob's role back and forth, make a second page of exactly those 8.
    for (let i = 0; i < 20; i++) {
      const role = i % 2 === 0 ? "admin" : "member"
      expect((await api(server, "PUT", "/accounts/acme/members/bob", "alice-token", { role })).status).toBe(200)
    }
    await open("/accounts/acme")
    const audit = page.getByRole("region", { name: "Audit log", exact: true })
    const status = audit.getByRole("status")
    await expect.poll(() => status.textContent()).toMatch(/^Entries 1–20 of \d+, newest first\.$/)
    const total = Number(/of (\d+)/.exec((await status.textContent())!)![1])
    expect(total).toBeGreaterThan(20)
    const table = audit.getByRole("region", { name: "Audit log table" })
    expect(await table.locator("tbody tr").count()).toBe(20)
    expect(await table.locator("tbody tr").first().textContent()).toContain("Changed bob from admin to member.")

    await audit.getByRole("button", { name: "Older" }).click()
    await expect.poll(() => status.textContent()).toBe(`Entries 21–${total} of ${total}, newest first.`)
    const older = (await table.textContent())!
    for (const action of ["token.created", "invitation.created", "invitation.accepted"]) expect(older).toContain(action)
    expect(older).toContain("carol joined as admin")
    await audit.getByRole("button", { name: "Newer" }).click()
    await expect.poll(() => status.textContent()).toMatch(/^Entries 1–20 of/)
    await shoot("account-manage")
  }, 60_000)

  it("deletes an account made for the test once its name is typed, and refuses one that runs a deployment", async () => {
    // acme runs dep-1: the API refuses with its sentence.
    await open("/accounts/acme")
    const danger = page.getByRole("region", { name: "Delete account", exact: true })
    await danger.getByRole("button", { name: "Delete account…" }).click()
    let dialog = page.getByRole("dialog", { name: "Delete acme?" })
    await dialog.getByLabel("Type acme to confirm").fill("acme")
    await dialog.getByRole("button", { name: "Delete account" }).click()
    await expect.poll(() => danger.getByRole("alert").textContent()).toContain("409 account_busy")

    const made = await api(server, "POST", "/accounts", "alice-token", { name: "scratch" })
    expect(made.status).toBe(201)
    await open("/accounts/scratch")
    const nav = page.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Account scratch" }).waitFor()
    await page.getByRole("region", { name: "Delete account", exact: true }).getByRole("button", { name: "Delete account…" }).click()
    dialog = page.getByRole("dialog", { name: "Delete scratch?" })
    const confirm = dialog.getByRole("button", { name: "Delete account" })
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel("Type scratch to confirm").fill("scratc")
    expect(await confirm.isDisabled()).toBe(true)
    await dialog.getByLabel("Type scratch to confirm").fill("scratch")
    await confirm.click()
    await page.waitForURL(`${server.origin}/`)
    await expect.poll(() => nav.getByRole("link", { name: "Account scratch" }).count()).toBe(0)
    expect((await api(server, "GET", "/accounts/scratch", "alice-token")).status).toBe(404)
  }, 60_000)

  it("sets up an empty instance from the sign-in page with the code its server printed, and is signed in", async () => {
    const empty = await startServer({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_DASHBOARD: distDir
    })
    const other = await newContext()
    try {
      await expect.poll(() => setupCodeIn(empty.output()), { timeout: 10_000 }).toBeDefined()
      const code = setupCodeIn(empty.output())!
      const first = await other.newPage()
      first.on("pageerror", (error) => pageErrors.push(error.message))
      await first.goto(`${empty.origin}/signin`)
      const setup = first.getByRole("region", { name: "Set up a new instance", exact: true })
      await setup.getByLabel("Setup code").fill("AAAAA-BBBBB-CCCCC-DDDDD")
      await setup.getByLabel("User id").fill("root")
      await setup.getByLabel("Display name (optional)").fill("Root Admin")
      await setup.getByRole("button", { name: "Set up and sign in" }).click()
      await expect.poll(() => setup.getByRole("alert").textContent()).toContain("403 invalid_setup_code")
      await shoot("setup", first)

      await setup.getByLabel("Setup code").fill(code)
      await setup.getByRole("button", { name: "Set up and sign in" }).click()
      await first.waitForURL(`${empty.origin}/`)
      await first.getByRole("button", { name: "Sign out" }).waitFor()
      expect(await first.getByRole("navigation", { name: "Main" }).textContent()).toContain("Root Admin")
      // The token went to POST /session only: nothing of it is kept in the page's storage.
      expect(await first.evaluate(() => window.localStorage.length + window.sessionStorage.length)).toBe(0)

      // The code is spent: the instance has its first user.
      const again = await fetch(`${empty.api}/setup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code, user_id: "other" })
      })
      expect(again.status).toBe(409)
    } finally {
      await other.close()
      await empty.stop()
    }
  }, 90_000)

  it("threw no error in the page", () => {
    expect(pageErrors).toEqual([])
  })
})
