/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core)
 * against the example server, started from source with fixtures and serving
 * the built dashboard at `/`: sign-in (token and device code), publish,
 * deploy, restart a pod, chat with the echo agent while the reply streams in,
 * the 409 limit, upload and download a file, a build event arriving live on
 * the account page, paging through traces. Each page is saved as a
 * screenshot in test-results/ (desktop, plus the chat at phone width).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import {
  checkAndShoot,
  api,
  approveDeviceLogin,
  describeInBrowser,
  distDir,
  ensureBuilt,
  launchBrowser,
  publishScreenshots,
  type Server,
  startRelay,
  startServer,
  writeFixtures
} from "./support.js"

const shots = ["signin", "catalog", "agent", "deployments", "account", "chat", "chat-phone", "files", "traces"] as const
type Shot = (typeof shots)[number]

const desktop = { width: 1280, height: 900 }
const phone = { width: 375, height: 812 }

describeInBrowser("the dashboard in Chromium", () => {
  let dir = ""
  let server: Server
  let browser: Browser
  let context: BrowserContext
  let page: Page
  /** The deployment made through the dashboard. */
  let deploymentId = ""
  /** Errors the page threw, which fail the run at the end. */
  const pageErrors: Array<string> = []

  /** Checks the page's accessibility basics, then saves its screenshot (support.ts). */
  const shoot = (name: Shot, target: Page = page) => checkAndShoot(target, name)

  const open = async (path: string) => {
    await page.goto(`${server.origin}${path}`)
    await page.locator("h1").first().waitFor()
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hosting-dashboard-e2e-"))
    await ensureBuilt()
    server = await startServer({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: distDir,
      // Slow enough that a reply visibly arrives in pieces.
      HOSTING_ECHO_DELAY_MS: "60",
      HOSTING_MESSAGE_LIMIT: "3",
      HOSTING_DEVICE_INTERVAL_S: "1",
      // The fixture's traces are dated 2026-11-01: kept whatever today's date, past the default retention.
      HOSTING_TRACE_RETENTION_DAYS: "0"
    })
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: desktop, locale: "en-US", timezoneId: "UTC", acceptDownloads: true })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    page.on("pageerror", (error) => pageErrors.push(error.message))
  }, 240_000)

  afterAll(async () => {
    await browser?.close().catch(() => undefined)
    await server?.stop()
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
    publishScreenshots(shots)
  }, 60_000)

  it("serves the dashboard at / and client-side routes, with the API beside it", async () => {
    const index = await fetch(`${server.origin}/agents/acme/helper`)
    expect(index.status).toBe(200)
    expect(await index.text()).toContain('<div id="app">')
    const catalog = await fetch(`${server.api}/agents`)
    expect(catalog.status).toBe(200)
  })

  it("starts with a skip link that the keyboard reaches first and that leads to the content", async () => {
    await open("/")
    await page.keyboard.press("Tab")
    const focused = page.locator(":focus")
    expect(await focused.textContent()).toBe("Skip to content")
    expect(await focused.isVisible()).toBe(true)
    await page.keyboard.press("Enter")
    // Following the link changes the URL after the key press returns: wait for it (bounded), then check it.
    await page.waitForURL(/#main$/, { timeout: 5000 }).catch(() => {})
    expect(page.url()).toMatch(/#main$/)
  })

  it("refuses a wrong token with the API's details, then signs in with a token", async () => {
    await open("/signin")
    await page.getByLabel("Platform token").fill("not-a-token")
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    const alert = page.getByRole("alert")
    await expect.poll(() => alert.textContent()).toContain("Sign-in failed")
    expect(await alert.textContent()).toMatch(/401/)
    await shoot("signin")

    await page.getByLabel("Platform token").fill("alice-token")
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.waitForURL(`${server.origin}/`)
    await page.getByRole("button", { name: "Sign out" }).waitFor()
    expect(await page.getByRole("navigation", { name: "Main" }).textContent()).toContain("Alice")

    // The session survives a reload: the cookie is HttpOnly and the page reads GET /session.
    const cookies = await context.cookies()
    const session = cookies.find((c) => c.name === "hosting_session")
    expect(session?.httpOnly).toBe(true)
    expect(session?.sameSite).toBe("Strict")
    await page.reload()
    await page.getByRole("button", { name: "Sign out" }).waitFor()
  }, 60_000)

  it("signs in with a code: the device flow approved on the server's page", async () => {
    const other = await browser.newContext({ viewport: desktop, locale: "en-US", timezoneId: "UTC" })
    try {
      const second = await other.newPage()
      await second.goto(`${server.origin}/signin?next=/accounts/acme`)
      await second.getByRole("button", { name: "Get a code" }).click()
      const code = (await second.locator(".user-code").textContent({ timeout: 10_000 }))!.trim()
      expect(code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/)
      await approveDeviceLogin(server, "bob-token", code)
      await second.waitForURL(`${server.origin}/accounts/acme`, { timeout: 15_000 })
      await second.getByRole("button", { name: "Sign out" }).waitFor()
      expect(await second.getByRole("navigation", { name: "Main" }).textContent()).toContain("Bob")
      // Signing out ends the session on the server: the cookie no longer works.
      await second.getByRole("button", { name: "Sign out" }).click()
      await second.getByRole("link", { name: "Sign in" }).first().waitFor()
      const state = await second.evaluate(async () => (await fetch("/api/v1/session")).status)
      expect(state).toBe(401)
    } finally {
      await other.close()
    }
  }, 60_000)

  it("lists the catalog and searches it by name", async () => {
    for (const [build, version] of [["b-1", "1.0.0"], ["b-2", undefined]] as const) {
      const registered = await api(server, "POST", "/agents/acme/helper/register", "alice-token", {
        build_id: build,
        registry: "ghcr.io/acme",
        spec_content: `name: helper\ndescription: Answers questions about the docs\n${build === "b-2" ? "colour: blue\n" : ""}`,
        readme: `# Helper\n\nAnswers **questions** about the docs.\n\n<script>window.injected = true</script>\n\n- [a link](https://example.com)\n- [not a link](javascript:alert(1))\n`
      })
      expect(registered.status).toBe(201)
      if (version !== undefined) {
        expect((await api(server, "POST", "/agents/acme/helper/publish", "alice-token", { build_id: build, version })).status).toBe(201)
      }
    }
    await api(server, "POST", "/agents/acme/notes/register", "alice-token", {
      build_id: "n-1",
      registry: "ghcr.io/acme",
      spec_content: "name: notes\ndescription: Keeps notes\n"
    })
    await api(server, "POST", "/agents/acme/notes/publish", "alice-token", { build_id: "n-1", version: "0.1.0" })

    await open("/")
    await page.getByRole("link", { name: "acme/helper" }).waitFor()
    expect(await page.getByRole("link", { name: "acme/notes" }).count()).toBe(1)
    await shoot("catalog")
    await page.getByLabel("Search agents by name").fill("notes")
    await page.getByRole("button", { name: "Search" }).click()
    await page.waitForURL(/\?q=notes/)
    await expect.poll(() => page.getByRole("link", { name: "acme/helper" }).count()).toBe(0)
    expect(await page.getByRole("link", { name: "acme/notes" }).count()).toBe(1)
  }, 60_000)

  it("shows an agent's builds with their warnings and readme (rendered safely), and publishes a build", async () => {
    await open("/agents/acme/helper")
    const unpublished = page.getByRole("article", { name: /Unpublished build b-2/ })
    await unpublished.waitFor()
    expect(await unpublished.textContent()).toContain("Unknown top-level key")
    const published = page.getByRole("article", { name: /Version 1\.0\.0 b-1/ })
    const readme = published.locator(".markdown")
    expect(await readme.locator("strong").textContent()).toBe("questions")
    expect(await readme.textContent()).toContain("<script>")
    expect(await page.evaluate(() => (window as { injected?: boolean }).injected)).toBeUndefined()
    expect(await readme.locator("a").count()).toBe(1)
    expect(await readme.locator("a").getAttribute("href")).toBe("https://example.com")

    await unpublished.getByLabel("Version to publish build b-2 as").fill("1.1")
    await unpublished.getByRole("button", { name: "Publish" }).click()
    expect(await unpublished.locator(".field-error").textContent()).toContain("major.minor.patch")
    await unpublished.getByLabel("Version to publish build b-2 as").fill("1.1.0")
    await unpublished.getByRole("button", { name: "Publish" }).click()
    await page.getByRole("article", { name: /Version 1\.1\.0 b-2/ }).waitFor()

    // The page's own calls carry the CSRF value; a cookie-authenticated POST without it is forbidden.
    const refused = await page.evaluate(async () => {
      const response = await fetch("/api/v1/agents/acme/helper/publish", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ build_id: "b-1", version: "1.0.0" })
      })
      return response.status
    })
    expect(refused).toBe(403)
    await shoot("agent")
  }, 60_000)

  it("deploys the latest published version and shows the deployment with its ConfigMap; restarts a pod after a confirmation", async () => {
    await open("/agents/acme/helper")
    const deploy = page.getByRole("region", { name: "Deploy", exact: true })
    await deploy.getByLabel("Build").selectOption({ label: "Latest published version" })
    await deploy.getByRole("button", { name: "Deploy" }).click()
    const done = deploy.getByRole("status")
    await expect.poll(() => done.textContent()).toContain("Deployed build b-2")
    deploymentId = (await done.locator("code").nth(2).textContent())!.trim()
    expect(deploymentId).not.toBe("")

    await deploy.getByRole("link", { name: "Deployment details" }).click()
    await page.waitForURL(/\/agents\/acme\/helper\/deployments\?deployment=/)
    const history = page.getByRole("region", { name: "Deployment history table" })
    await history.getByText(deploymentId).waitFor()
    expect(await history.textContent()).toContain("superseded")
    const configMap = page.getByRole("region", { name: "ConfigMap", exact: true })
    await configMap.getByRole("region", { name: "Data of ConfigMap helper-config table" }).waitFor()
    expect(await configMap.textContent()).toContain("agent.yaml")

    const restart = page.getByRole("region", { name: "Restart a pod", exact: true })
    await restart.getByLabel("Pod name").fill("helper-0")
    await restart.getByRole("button", { name: "Restart…" }).click()
    const dialog = page.getByRole("dialog", { name: "Restart the pod?" })
    await dialog.waitFor()
    await dialog.getByRole("button", { name: "Cancel" }).click()
    await dialog.waitFor({ state: "hidden" })
    await restart.getByRole("button", { name: "Restart…" }).click()
    await dialog.getByRole("button", { name: "Restart pod" }).click()
    await expect.poll(() => restart.getByRole("status").textContent()).toContain("restarting")
    await shoot("deployments")
  }, 60_000)

  it("sees a build event arrive live on the account page, and the agent refetched", async () => {
    await open("/accounts/acme")
    const events = page.getByRole("region", { name: "Live events", exact: true })
    await events.getByText("Live", { exact: true }).waitFor()
    expect(await page.getByRole("region", { name: "Members", exact: true }).textContent()).toContain("Bob")
    const row = page.locator('tr[data-agent="helper"]')
    await row.waitFor()
    expect(await row.locator("td").first().textContent()).toBe("2")

    const registered = await api(server, "POST", "/agents/acme/helper/register", "alice-token", {
      build_id: "b-3",
      registry: "ghcr.io/acme",
      spec_content: "name: helper\ndescription: Answers questions about the docs\n"
    })
    expect(registered.status).toBe(201)
    const log = page.getByRole("log", { name: "Build events of the account" })
    await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("acme/helper: build b-3 registered")
    // The event is a hint: the page read the agent again and shows the new build.
    await expect.poll(() => row.locator("td").first().textContent(), { timeout: 10_000 }).toBe("3")
    expect(await row.textContent()).toContain("registered")
    await shoot("account")
  }, 60_000)

  it("shows the stream reconnecting after a drop, and catches up on what it missed (Last-Event-ID)", async () => {
    const relay = await startRelay(server.origin)
    const other = await browser.newContext({ viewport: desktop, locale: "en-US", timezoneId: "UTC" })
    try {
      const second = await other.newPage()
      await second.goto(`${relay.origin}/signin?next=/accounts/acme`)
      await second.getByLabel("Platform token").fill("alice-token")
      await second.getByRole("button", { name: "Sign in", exact: true }).click()
      await second.waitForURL(`${relay.origin}/accounts/acme`)
      const events = second.getByRole("region", { name: "Live events", exact: true })
      const indicator = events.locator(".connection")
      await events.getByText("Live", { exact: true }).waitFor()
      const log = second.getByRole("log", { name: "Build events of the account" })
      const register = (build: string) =>
        api(server, "POST", "/agents/acme/helper/register", "alice-token", {
          build_id: build,
          registry: "ghcr.io/acme",
          spec_content: "name: helper\ndescription: Answers questions about the docs\n"
        })
      await register("b-4")
      await expect.poll(() => log.textContent(), { timeout: 10_000 }).toContain("build b-4 registered")

      relay.cut()
      await expect.poll(() => indicator.textContent(), { timeout: 10_000 }).toMatch(/Reconnecting/)
      // Missed while the connection is down: replayed after the last id the page saw.
      await register("b-5")
      relay.restore()
      await expect.poll(() => log.textContent(), { timeout: 20_000 }).toContain("build b-5 registered")
      await expect.poll(() => indicator.textContent()).toBe("Live")
    } finally {
      await other.close()
      await relay.close()
    }
  }, 60_000)

  it("chats with the echo agent: attachments upload with progress, the reply streams in piece by piece", async () => {
    await open(`/deployments/${deploymentId}/chat`)
    await page.getByRole("heading", { name: "New conversation" }).waitFor()
    await page.getByLabel("Attach files").setInputFiles({
      name: "brief.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("the brief, uploaded from the browser\n")
    })
    await page.getByRole("list", { name: "Uploads" }).getByText("ready").waitFor()

    // Record every text the reply shows, to see it grow.
    await page.evaluate(() => {
      const seen: Array<string> = []
      ;(window as unknown as { replyTexts: Array<string> }).replyTexts = seen
      new MutationObserver(() => {
        const text = document.querySelector(".message-assistant .message-text")?.textContent ?? ""
        if (text !== "" && seen[seen.length - 1] !== text) seen.push(text)
      }).observe(document.body, { subtree: true, childList: true, characterData: true })
    })
    const words = "one two three four five six seven eight nine ten eleven twelve"
    await page.getByRole("textbox", { name: "Message", exact: true }).fill(words)
    await page.getByRole("button", { name: "Send" }).click()
    await page.waitForURL(new RegExp(`/deployments/${deploymentId}/chat/[0-9a-f-]{36}$`))
    const reply = page.locator(".message-assistant").last()
    await expect.poll(() => reply.getAttribute("class"), { timeout: 15_000 }).toContain("message-complete")
    const replyText = (await reply.locator(".message-text").textContent())!
    expect(replyText).toContain("twelve")
    const texts = await page.evaluate(() => (window as unknown as { replyTexts: Array<string> }).replyTexts)
    expect(texts.length).toBeGreaterThan(2)
    expect(texts[0]!.length).toBeLessThan(replyText.length)

    // The user message carries its attachment; the list shows the conversation.
    expect(await page.locator(".message-user").last().getByRole("link", { name: "brief.txt" }).count()).toBe(1)
    const list = page.getByRole("complementary", { name: "Conversations" })
    await list.getByRole("link", { name: /^one two three/ }).waitFor()
    await shoot("chat")
  }, 60_000)

  it("renames a conversation inline, cancels a reply, and shows the 409 limit as 'start a new conversation'", async () => {
    const list = page.getByRole("complementary", { name: "Conversations" })
    await list.getByRole("button", { name: /^Rename one two three/ }).click()
    const input = list.getByLabel("New title")
    await input.fill("Counting practice")
    await input.press("Enter")
    await list.getByRole("link", { name: "Counting practice" }).waitFor()
    expect(await page.getByRole("heading", { name: "Counting practice" }).count()).toBe(1)

    // A long reply, stopped while it streams.
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ")
    await page.getByRole("textbox", { name: "Message", exact: true }).fill(long)
    await page.getByRole("button", { name: "Send" }).click()
    const stop = page.getByRole("button", { name: "Stop the reply" })
    await stop.waitFor({ timeout: 10_000 })
    await stop.click()
    await page.locator(".message-assistant.message-cancelled").waitFor({ timeout: 10_000 })

    // The limit is 3 user messages: the third goes through, the fourth is refused.
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("third")
    await page.getByRole("button", { name: "Send" }).click()
    await expect.poll(() => page.locator(".message-user").count()).toBe(3)
    await expect.poll(() => page.locator(".message-assistant").last().getAttribute("class"), { timeout: 10_000 }).toContain("message-complete")
    await page.getByRole("textbox", { name: "Message", exact: true }).fill("fourth")
    await page.getByRole("button", { name: "Send" }).click()
    const limit = page.getByRole("alert").filter({ hasText: "message limit" })
    await limit.waitFor()
    await limit.getByRole("link", { name: "Start a new conversation" }).click()
    await page.getByRole("heading", { name: "New conversation" }).waitFor()
  }, 60_000)

  it("fits a phone: the chat at 375 pixels wide, without sideways scrolling", async () => {
    const small = await context.newPage()
    try {
      await small.setViewportSize(phone)
      await small.goto(`${server.origin}/deployments/${deploymentId}/chat`)
      await small.getByRole("complementary", { name: "Conversations" }).getByRole("link", { name: "Counting practice" }).click()
      await small.locator(".message-assistant").first().waitFor()
      const overflow = await small.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
      expect(overflow).toBeLessThanOrEqual(0)
      // The menu opens from a button on small screens.
      await small.getByRole("button", { name: "Menu" }).click()
      await small.getByRole("link", { name: "Catalog" }).waitFor()
      await small.getByRole("button", { name: "Menu" }).click()
      await shoot("chat-phone", small)
    } finally {
      await small.close()
    }
  }, 60_000)

  it("uploads a file with a progress bar and downloads it again; downloads the fixture's file", async () => {
    await open(`/deployments/${deploymentId}/files`)
    const content = "a".repeat(300_000)
    // The bytes are held back until the progress bar has been seen.
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route(/\/api\/v1\/deployments\/[^/]+\/files\/[^/]+\/content$/, async (route) => {
      if (route.request().method() !== "PUT") return route.fallback()
      await held
      await route.continue()
    })
    await page.getByLabel("Choose files to upload").setInputFiles({ name: "big.txt", mimeType: "text/plain", buffer: Buffer.from(content) })
    const progress = page.getByRole("progressbar", { name: /big\.txt/ })
    await progress.waitFor()
    expect(Number(await progress.getAttribute("value"))).toBeLessThanOrEqual(100)
    release()
    await page.getByRole("list", { name: "Uploads" }).getByText("ready").waitFor({ timeout: 15_000 })
    await progress.waitFor({ state: "detached" })
    await page.unroute(/\/api\/v1\/deployments\/[^/]+\/files\/[^/]+\/content$/)
    const table = page.getByRole("region", { name: "Files table" })
    const link = table.getByRole("link", { name: /big\.txt/ })
    await link.waitFor()
    expect(await table.getByRole("link", { name: /brief\.txt/ }).count()).toBe(1)
    await shoot("files")

    const [download] = await Promise.all([page.waitForEvent("download"), link.click()])
    expect(download.suggestedFilename()).toBe("big.txt")
    expect(readFileSync((await download.path())!, "utf8")).toBe(content)

    await open("/deployments/dep-1/files")
    const notes = page.getByRole("region", { name: "Files table" }).getByRole("link", { name: /notes\.txt/ })
    const [again] = await Promise.all([page.waitForEvent("download"), notes.click()])
    expect(readFileSync((await again.path())!, "utf8")).toBe("hello")
  }, 60_000)

  it("pages through traces, filters them by status, and shows the latency chart and the error rate", async () => {
    await open("/agents/acme/helper/traces")
    const status = page.getByRole("status").filter({ hasText: /^Traces \d/ })
    await expect.poll(() => status.textContent()).toMatch(/^Traces 1–20 of \d+, newest first\.$/)
    const total = Number(/of (\d+)/.exec((await status.textContent())!)![1])
    expect(total).toBeGreaterThanOrEqual(45)
    await page.getByLabel("Per page").selectOption("10")
    await page.getByRole("button", { name: "Apply" }).click()
    await expect.poll(() => status.textContent()).toBe(`Traces 1–10 of ${total}, newest first.`)
    await page.getByRole("button", { name: "Next page" }).click()
    await expect.poll(() => status.textContent()).toBe(`Traces 11–20 of ${total}, newest first.`)
    expect(page.url()).toContain("offset=10")
    await page.goBack()
    await expect.poll(() => status.textContent()).toBe(`Traces 1–10 of ${total}, newest first.`)

    const chart = page.getByRole("img", { name: /Latency over time/ })
    await chart.waitFor()
    expect(await chart.locator("circle, rect").count()).toBe(10)
    const rate = page.getByRole("region", { name: "Error rate", exact: true })
    await expect.poll(() => rate.textContent()).toMatch(/\d+\.\d%/)

    await page.getByLabel("Status").selectOption("error")
    await page.getByRole("button", { name: "Apply" }).click()
    // The unfiltered total can match the same pattern, so wait for a count other than it: the filtered page, not the old one.
    await expect.poll(() => status.textContent()).not.toBe(`Traces 1–10 of ${total}, newest first.`)
    await expect.poll(() => status.textContent()).toMatch(/^Traces 1–10 of (1[1-9]|[2-9]\d), newest first\.$/)
    expect(page.url()).toContain("status=error")
    const rows = page.getByRole("region", { name: "Traces table" }).locator("tbody tr")
    expect(await rows.count()).toBe(10)
    await expect.poll(async () => (await rows.allTextContents()).filter((text) => !text.includes("error")).length).toBe(0)
    await page.getByLabel("Status").selectOption("")
    await page.getByRole("button", { name: "Apply" }).click()
    await expect.poll(() => status.textContent()).toBe(`Traces 1–10 of ${total}, newest first.`)
    await page.getByRole("button", { name: "Next page" }).click()
    await expect.poll(() => status.textContent()).toBe(`Traces 11–20 of ${total}, newest first.`)
    await shoot("traces")
  }, 60_000)

  it("rolls the running deployment back to the build before it, after a confirmation (issue 28)", async () => {
    // 1.0.0 (b-1), then 1.1.0 (b-2): the running deployment can return to b-1.
    expect((await api(server, "POST", "/agents/acme/helper/deployments", "alice-token", { version: "1.0.0" })).status).toBe(201)
    const running = await api(server, "POST", "/agents/acme/helper/deployments", "alice-token", { version: "1.1.0" })
    const runningId = (running.body as { id: string }).id
    await open(`/agents/acme/helper/deployments?deployment=${runningId}`)
    const rollback = page.getByRole("region", { name: "Roll back", exact: true })
    await expect.poll(() => rollback.textContent()).toContain("Deploys build b-1 again, the one that ran before b-2")
    await rollback.getByRole("button", { name: "Roll back…" }).click()
    const dialog = page.getByRole("dialog", { name: "Roll back the deployment?" })
    await dialog.getByRole("button", { name: "Roll back to b-1" }).click()
    const notice = page.getByRole("status").filter({ hasText: "Rolled" })
    await expect.poll(() => notice.textContent()).toContain(`Rolled ${runningId} back to build b-1`)
    const history = page.getByRole("region", { name: "Deployment history table" })
    await expect.poll(() => history.textContent()).toContain(`rollback of ${runningId}`)
    expect(page.url()).not.toContain(runningId)
  }, 60_000)

  it("sets what a message sent while a reply streams does, in the deployment's Settings card (issue 28)", async () => {
    const made = await api(server, "POST", "/agents/acme/helper/deployments", "alice-token", { version: "1.0.0" })
    const deploymentId = (made.body as { id: string }).id
    await open(`/agents/acme/helper/deployments?deployment=${deploymentId}`)
    const settings = page.getByRole("region", { name: "Settings", exact: true })
    const choice = settings.getByLabel("A message sent while a reply still streams")
    await expect.poll(() => choice.inputValue()).toBe("interrupt")
    expect(await settings.getByRole("button", { name: "Save" }).isDisabled()).toBe(true)
    await choice.selectOption("queue")
    await expect.poll(() => settings.textContent()).toContain("its reply starts when the running one ends")
    await settings.getByRole("button", { name: "Save" }).click()
    const notice = settings.getByRole("status")
    await expect.poll(() => notice.textContent()).toContain("Messages sent while a reply streams: queue")
    const stored = await api(server, "GET", `/deployments/${deploymentId}`, "alice-token")
    expect((stored.body as { settings: unknown }).settings).toEqual({ concurrent_send: "queue" })
    // The page reads it again: the choice stays, and saving the same again is not offered.
    await expect.poll(() => settings.getByRole("button", { name: "Save" }).isDisabled()).toBe(true)
    expect(await choice.inputValue()).toBe("queue")
  })

  it("sets a secret on the account page (the value write-only), lists it by name, and a deploy shows the secret it reads (issue 28)", async () => {
    await open("/accounts/acme")
    const secrets = page.getByRole("region", { name: "Secrets", exact: true })
    await secrets.getByText("No secrets yet.").waitFor()
    await secrets.getByLabel("Name").fill("not valid")
    await secrets.getByLabel("Value").fill("x")
    await secrets.getByRole("button", { name: "Save secret" }).click()
    expect(await secrets.getByLabel("Name").getAttribute("aria-invalid")).toBe("true")
    const value = `sk-dashboard-${Date.now()}`
    await secrets.getByLabel("Name").fill("OPENAI_KEY")
    await secrets.getByLabel("Value").fill(value)
    await secrets.getByRole("button", { name: "Save secret" }).click()
    await expect.poll(() => secrets.textContent()).toContain("Created the secret OPENAI_KEY")
    await secrets.locator('tr[data-secret="OPENAI_KEY"]').waitFor()
    // Write-only: the field is empty again and the value is nowhere on the page.
    expect(await secrets.getByLabel("Value").inputValue()).toBe("")
    expect(await page.content()).not.toContain(value)

    const deployed = await api(server, "POST", "/agents/acme/helper/deployments", "alice-token", {
      version: "1.1.0",
      env: { MODE: "slow", API_KEY: { secret: "OPENAI_KEY" } }
    })
    expect(deployed.status).toBe(201)
    await open(`/agents/acme/helper/deployments?deployment=${(deployed.body as { id: string }).id}`)
    const env = page.getByRole("region", { name: "Env set by the deploy", exact: true })
    await expect.poll(() => env.textContent()).toContain("secret OPENAI_KEY")
    expect(await page.content()).not.toContain(value)

    await open("/accounts/acme")
    await secrets.locator('tr[data-secret="OPENAI_KEY"]').getByRole("button", { name: "Delete the secret OPENAI_KEY" }).click()
    await expect.poll(() => secrets.textContent()).toContain("Deleted the secret OPENAI_KEY")
    await secrets.getByText("No secrets yet.").waitFor()
  }, 60_000)

  it("sets a channel, yanks a version and deploys through the channel, following it, on the agent page (issue 28)", async () => {
    await open("/agents/acme/helper")
    const channels = page.getByRole("region", { name: "Channels", exact: true })
    await expect.poll(() => channels.textContent()).toContain("(implicit)")
    await channels.getByLabel("Channel").fill("Not A Name")
    await channels.getByRole("button", { name: "Set channel" }).click()
    expect(await channels.getByLabel("Channel").getAttribute("aria-invalid")).toBe("true")
    await channels.getByLabel("Channel").fill("stable")
    await channels.getByLabel("Version").selectOption("1.0.0")
    await channels.getByRole("button", { name: "Set channel" }).click()
    await channels.getByRole("button", { name: "Remove channel stable" }).waitFor()

    const newest = page.getByRole("article", { name: /Version 1\.1\.0 b-2/ })
    await newest.getByLabel("Yank 1.1.0: why?").fill("leaks memory")
    await newest.getByRole("button", { name: "Yank" }).click()
    await expect.poll(() => newest.textContent()).toContain("leaks memory")
    const listed = await api(server, "GET", "/agents/acme/helper/channels", "alice-token")
    expect((listed.body as { channels: Array<{ name: string; version: string }> }).channels.map((c) => `${c.name}=${c.version}`))
      .toEqual(["latest=1.0.0", "stable=1.0.0"])

    const deploy = page.getByRole("region", { name: "Deploy", exact: true })
    await deploy.getByLabel("Build").selectOption({ label: "Channel stable (1.0.0)" })
    await deploy.getByLabel(/Follow it/).check()
    await deploy.getByRole("button", { name: "Deploy" }).click()
    await expect.poll(() => deploy.getByRole("status").textContent()).toContain("following its channel stable")

    await newest.getByRole("button", { name: "Undo the yank of 1.1.0" }).click()
    await newest.getByLabel("Yank 1.1.0: why?").waitFor()
  }, 60_000)

  it("renames the account (owner): the page and the navigation follow the new name", async () => {
    await open("/accounts/acme")
    const rename = page.getByRole("region", { name: "Rename", exact: true })
    await rename.getByLabel("New name").fill("Not A Slug")
    await rename.getByRole("button", { name: "Rename" }).click()
    expect(await rename.getByLabel("New name").getAttribute("aria-invalid")).toBe("true")
    await rename.getByLabel("New name").fill("acme-labs")
    await rename.getByRole("button", { name: "Rename" }).click()
    await page.waitForURL(`${server.origin}/accounts/acme-labs`)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Account acme-labs" }).waitFor()
    expect((await api(server, "GET", "/accounts/acme-labs", "alice-token")).status).toBe(200)
  }, 60_000)

  it("threw no error in the page", () => {
    expect(pageErrors).toEqual([])
  })
})
