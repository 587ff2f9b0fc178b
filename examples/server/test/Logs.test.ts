/**
 * The example server's log (issue 27): JSON lines when stdout is not a
 * terminal, one access line per request with the route's template, the
 * status, the user and the request id it answered in `X-Request-Id`, never a
 * token or a query; HOSTING_ACCESS_LOG=off and HOSTING_LOG_LEVEL quiet it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type Running, serversWithFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-logs-"))
const servers = serversWithFixtures(dir)
afterAll(async () => {
  await servers.stopAll()
  rmSync(dir, { recursive: true, force: true })
})

const startWith = servers.start

/** The JSON objects of the output's lines (other lines, such as the listening line, are skipped). */
const entriesOf = (output: string) =>
  output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line) as {
    message: string
    logLevel: string
    annotations: Record<string, unknown>
  })

/** Waits until the output holds an access line of the request id (lines go out after the event loop's turn). */
const accessLineOf = async (server: Running, id: string) => {
  for (let i = 0; i < 100; i++) {
    const found = entriesOf(server.output()).find((e) => e.message === "request" && e.annotations["request_id"] === id)
    if (found !== undefined) return found
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return undefined
}

describe("the example server's log", () => {
  it("JSON lines by default off a terminal: an access line per request, answered with its request id; no secret", async () => {
    const server = await startWith({})
    const answer = await fetch(`${server.baseUrl}/accounts/acme?token=query-secret`, { headers: { authorization: "Bearer alice-token" } })
    expect(answer.status).toBe(200)
    const id = answer.headers.get("x-request-id")!
    expect(id).toMatch(/^[0-9a-f]{32}$/)
    const line = await accessLineOf(server, id)
    expect(line, server.output()).toMatchObject({
      logLevel: "INFO",
      annotations: { method: "GET", route: "/api/v1/accounts/:account", status: 200, user: "alice", request_id: id }
    })
    expect(entriesOf(server.output()).some((e) => e.message.startsWith("fixtures loaded"))).toBe(true)
    expect(server.output()).not.toContain("alice-token")
    expect(server.output()).not.toContain("query-secret")
  }, 60_000)

  it("HOSTING_ACCESS_LOG=off writes no access line; HOSTING_LOG_LEVEL=warning hides what is below it", async () => {
    const server = await startWith({ HOSTING_ACCESS_LOG: "off", HOSTING_LOG_LEVEL: "warning" })
    const answer = await fetch(`${server.baseUrl}/me`, { headers: { authorization: "Bearer alice-token" } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("x-request-id")).toMatch(/^[0-9a-f]{32}$/)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const entries = entriesOf(server.output())
    expect(entries.filter((e) => e.message === "request")).toEqual([])
    expect(entries.filter((e) => e.logLevel === "INFO")).toEqual([])
  }, 60_000)
})
