/**
 * The traces of issue 30 in Chromium: the traces page charts the server's
 * p50, p95 and error rate for the chosen window, and a trace opens as a span
 * waterfall (bars offset by start, as wide as they lasted, nested by parent)
 * whose spans show their attributes, input, output and tokens.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, expect, it } from "vitest"
import { api, checkAndShoot, describeInBrowser, distDir, ensureBuilt, launchBrowser, type Server, startServer, writeFixtures } from "./support.js"

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const start = BigInt(Date.parse("2026-11-02T09:00:00Z")) * 1_000_000n
const at = (ms: number) => String(start + BigInt(ms) * 1_000_000n)
const text = (key: string, value: string) => ({ key, value: { stringValue: value } })

/** An agent turn of 400 ms: a root, an LLM call from 50 to 250 ms under it, and a tool from 260 to 380 ms that failed. */
const exported = {
  resourceSpans: [{
    resource: { attributes: [text("service.name", "acme/helper")] },
    scopeSpans: [{
      spans: [
        { traceId, spanId: "00f067aa0ba902b7", name: "turn", kind: 2, startTimeUnixNano: at(0), endTimeUnixNano: at(400), attributes: [text("input.value", "what is 6 x 7?")] },
        {
          traceId,
          spanId: "b7ad6b7169203331",
          parentSpanId: "00f067aa0ba902b7",
          name: "llm",
          kind: 3,
          startTimeUnixNano: at(50),
          endTimeUnixNano: at(250),
          attributes: [
            text("gen_ai.operation.name", "chat"),
            text("gen_ai.request.model", "m-large"),
            { key: "gen_ai.usage.input_tokens", value: { intValue: "12" } },
            { key: "gen_ai.usage.output_tokens", value: { intValue: "5" } },
            text("output.value", "42")
          ]
        },
        {
          traceId,
          spanId: "c7ad6b7169203332",
          parentSpanId: "00f067aa0ba902b7",
          name: "calculator",
          kind: 1,
          startTimeUnixNano: at(260),
          endTimeUnixNano: at(380),
          status: { code: 2, message: "division by zero" }
        }
      ]
    }]
  }]
}

describeInBrowser("the trace view in Chromium", () => {
  let dir = ""
  let server: Server
  let browser: Browser
  let page: Page
  const pageErrors: Array<string> = []

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hosting-trace-view-"))
    await ensureBuilt()
    server = await startServer({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: distDir,
      HOSTING_TRACE_RETENTION_DAYS: "0"
    })
    const registered = await api(server, "POST", "/agents/acme/helper/register", "alice-token", {
      build_id: "b-1",
      registry: "ghcr.io/acme",
      spec_content: "name: helper\ndescription: Helps people\n",
      readme: "# Helper"
    })
    expect(registered.status).toBe(201)
    expect((await api(server, "POST", "/otlp/v1/traces", "alice-token", exported)).status).toBe(200)
    browser = await launchBrowser()
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US", timezoneId: "UTC" })
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
    page.on("pageerror", (error) => pageErrors.push(error.message))
    await page.goto(`${server.origin}/signin`)
    await page.getByLabel("Platform token").fill("alice-token")
    await page.getByRole("button", { name: "Sign in", exact: true }).click()
    await page.getByRole("button", { name: "Sign out" }).waitFor()
  }, 240_000)

  afterAll(async () => {
    await browser?.close().catch(() => undefined)
    await server?.stop()
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
    expect(pageErrors).toEqual([])
  }, 60_000)

  it("charts p50, p95 and error rate over the chosen window from the stats route", async () => {
    // The fixtures' 45 traces run from 08:00 to 12:24 on 2026-11-01, every fourth an error.
    await page.goto(`${server.origin}/agents/acme/helper/traces?start=2026-11-01T08:00:00.000Z&end=2026-11-01T12:30:00.000Z`)
    const chart = page.getByRole("img", { name: /Latency percentiles and error rate/ })
    await chart.waitFor()
    const summary = await chart.locator("desc").textContent()
    expect(summary).toMatch(/^45 traces in 24 buckets/)
    expect(summary).toContain("11 errors (24.4%)")
    expect(await chart.locator("path.p50").getAttribute("d")).toMatch(/^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+$/)
    expect(await chart.locator("path.p95").getAttribute("d")).toMatch(/^M/)
    expect(await chart.locator("rect.error-bar").count()).toBeGreaterThan(0)
    // The stats are of the window, not of the page: the page shows 20 of them.
    expect(await page.getByRole("region", { name: "Traces table" }).locator("tbody tr").count()).toBe(20)
    await checkAndShoot(page, "trace-stats")
  }, 60_000)

  it("opens a trace from the list as a waterfall; a span shows its attributes, output and tokens", async () => {
    await page.goto(`${server.origin}/agents/acme/helper/traces?start=2026-11-02T08:00:00.000Z&end=2026-11-02T10:00:00.000Z`)
    const row = page.getByRole("region", { name: "Traces table" }).locator("tbody tr").first()
    await row.waitFor()
    expect(await row.textContent()).toContain("m-large")
    expect(await row.textContent()).toContain("12 / 5")
    await row.getByRole("link", { name: traceId }).click()
    await page.waitForURL(new RegExp(`/traces/${traceId}`))
    const spans = page.getByRole("list", { name: "Spans" })
    await spans.waitFor()
    const rows = spans.getByRole("button")
    expect(await rows.allTextContents()).toEqual([
      expect.stringMatching(/^turn.*\+0 ms · 400 ms$/),
      expect.stringMatching(/^llm.*\+50 ms · 200 ms$/),
      expect.stringMatching(/^calculator.*error.*\+260 ms · 120 ms$/)
    ])
    // Bars: offset by start, as wide as they lasted, in percent of the trace's 400 ms; children indented.
    const bars = await spans.locator(".span-bar").evaluateAll((els) => els.map((el) => [el.getAttribute("data-left"), el.getAttribute("data-width")]))
    expect(bars).toEqual([["0.00", "100.00"], ["12.50", "50.00"], ["65.00", "30.00"]])
    const indents = await spans.locator(".span-name").evaluateAll((els) => els.map((el) => (el as HTMLElement).style.paddingLeft))
    expect(indents).toEqual(["0rem", "1.1rem", "1.1rem"])
    const facts = page.getByRole("region", { name: "turn", exact: true })
    expect(await facts.textContent()).toContain("12 in, 5 out")
    expect(await facts.textContent()).toContain("what is 6 x 7?")

    await rows.nth(1).click()
    await expect.poll(() => page.url()).toContain("span=b7ad6b7169203331")
    const details = page.getByRole("region", { name: "Span llm" })
    await details.waitFor()
    expect(await rows.nth(1).getAttribute("aria-pressed")).toBe("true")
    expect(await details.textContent()).toContain("m-large")
    expect(await details.textContent()).toContain("12 in, 5 out")
    expect(await details.getByRole("table", { name: "Span attributes" }).textContent()).toContain("gen_ai.request.model")
    expect(await details.textContent()).toMatch(/Output\s*42/)
    await rows.nth(2).click()
    await expect.poll(async () => (await page.getByRole("region", { name: "Span calculator" }).textContent()) ?? "").toContain("division by zero")
    await checkAndShoot(page, "trace")
  }, 60_000)
})
