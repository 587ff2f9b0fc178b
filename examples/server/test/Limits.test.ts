/**
 * The example server's limits as a client meets them: slow clients are cut
 * with a 408 body while others are served, requests Node cannot read get the
 * error body, event streams outlive the request timeout, streams per token
 * are capped, and the address rate limit holds on the early answers of
 * cached agent reads too.
 */
import { mkdtempSync, rmSync } from "node:fs"
import * as Net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, runToExit, type Running, start, writeFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-limits-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const fixtures = writeFixtures(dir)

const headersTimeoutMs = 1_000
const requestTimeoutMs = 2_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const addressOf = (server: Running) => {
  const url = new URL(server.baseUrl)
  return { host: url.hostname, port: Number(url.port) }
}

/**
 * Opens a raw connection, writes `head`, then `trickle` one byte every
 * `everyMs`; resolves with what the server sent and when it closed.
 */
const slowClient = (server: Running, head: string, trickle: string, everyMs: number) =>
  new Promise<{ text: string; elapsedMs: number }>((resolve, reject) => {
    const began = Date.now()
    const socket = Net.connect(addressOf(server))
    let text = ""
    let at = 0
    const timer = setInterval(() => {
      if (at < trickle.length && socket.writable) socket.write(trickle[at++]!)
    }, everyMs)
    const guard = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept the slow connection open for 10 s; got ${JSON.stringify(text)}`))
    }, 10_000)
    socket.on("data", (data) => (text += data))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearInterval(timer)
      clearTimeout(guard)
      resolve({ text, elapsedMs: Date.now() - began })
    })
    socket.write(head)
  })

/** Sends raw bytes and resolves with everything the server answered before closing. */
const rawExchange = (server: Running, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = Net.connect(addressOf(server))
    let text = ""
    const guard = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no close within 5 s; got ${JSON.stringify(text)}`))
    }, 5_000)
    socket.on("data", (data) => (text += data))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(guard)
      resolve(text)
    })
    socket.write(bytes)
  })

/** Status and JSON body of a raw HTTP answer. */
const parseAnswer = (text: string) => {
  const [head, body = ""] = text.split("\r\n\r\n")
  return { status: Number(head!.split(" ")[1]), head: head!.toLowerCase(), body: body === "" ? undefined : JSON.parse(body) }
}

describe("example server: timeouts, client errors and streams per token", () => {
  let server: Running

  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_DASHBOARD: "off",
      HOSTING_FIXTURES: fixtures,
      HOSTING_HEADERS_TIMEOUT_MS: String(headersTimeoutMs),
      HOSTING_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
      HOSTING_HEARTBEAT_MS: "250",
      HOSTING_MAX_STREAMS_PER_TOKEN: "2"
    })
  })
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop()
  })

  it("a client trickling its headers is cut after the headers timeout with 408 { error, details }, while others are served", async () => {
    const slow = slowClient(server, "GET /api/v1/agents HTTP/1.1\r\nhost: x\r\n", "x-slow: " + "a".repeat(200), 50)
    const served: Array<{ status: number; ms: number }> = []
    for (let i = 0; i < 5; i++) {
      const began = Date.now()
      const answer = await call(server, "GET", "/agents")
      served.push({ status: answer.status, ms: Date.now() - began })
      await sleep(100)
    }
    expect(served.map((s) => s.status)).toEqual([200, 200, 200, 200, 200])
    expect(Math.max(...served.map((s) => s.ms))).toBeLessThan(1_000)
    const cut = await slow
    expect(cut.elapsedMs).toBeGreaterThanOrEqual(headersTimeoutMs - 100)
    expect(cut.elapsedMs).toBeLessThan(headersTimeoutMs + 2_000)
    const answer = parseAnswer(cut.text)
    expect(answer.status).toBe(408)
    expect(answer.body).toMatchObject({ error: "request_timeout" })
    expect(typeof answer.body.details).toBe("string")
  })

  it("a client trickling its body is cut after the request timeout with 408, and nothing is registered", async () => {
    const body = JSON.stringify({ build_id: "slow-1", registry: "ghcr.io/acme", spec_content: "name: slow\n" })
    const head = `POST /api/v1/agents/acme/slow/register HTTP/1.1\r\nhost: x\r\nauthorization: Bearer alice-token\r\n` +
      `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`
    const cut = await slowClient(server, head, body, 100)
    expect(cut.elapsedMs).toBeGreaterThanOrEqual(requestTimeoutMs - 100)
    expect(cut.elapsedMs).toBeLessThan(requestTimeoutMs + 2_000)
    expect(parseAnswer(cut.text)).toMatchObject({ status: 408, body: { error: "request_timeout" } })
    expect((await call(server, "GET", "/agents/acme/slow", "alice-token")).status).toBe(404)
  })

  it("an event stream lives on past the request timeout (it limits receiving requests, not answering them)", async () => {
    const controller = new AbortController()
    const response = await fetch(`${server.baseUrl}/accounts/acme/events`, {
      headers: { authorization: "Bearer alice-token" },
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const began = Date.now()
    let text = ""
    try {
      while (Date.now() - began < requestTimeoutMs + 1_000) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      expect(Date.now() - began).toBeGreaterThanOrEqual(requestTimeoutMs + 1_000)
      expect(text.match(/event: heartbeat/g)!.length).toBeGreaterThan(requestTimeoutMs / 250)
    } finally {
      controller.abort()
    }
  })

  it("oversize headers are 431 and a malformed request is 400, both with { error, details }", async () => {
    const big = parseAnswer(await rawExchange(server, `GET /api/v1/agents HTTP/1.1\r\nhost: x\r\nx-big: ${"b".repeat(20_000)}\r\n\r\n`))
    expect(big).toMatchObject({ status: 431, body: { error: "headers_too_large" } })
    const garbage = parseAnswer(await rawExchange(server, "THIS IS NOT HTTP\r\n\r\n"))
    expect(garbage.status).toBe(400)
    expect(garbage.body).toMatchObject({ error: "invalid_request" })
    expect(garbage.head).toContain("content-type: application/json")
  })

  it("HOSTING_MAX_STREAMS_PER_TOKEN caps a token's open streams: the next is 429 too_many_streams, and a closed one frees its slot", async () => {
    const open = async () => {
      const controller = new AbortController()
      const response = await fetch(`${server.baseUrl}/accounts/acme/events`, { headers: { authorization: "Bearer bob-token" }, signal: controller.signal })
      return { response, close: () => controller.abort() }
    }
    const first = await open()
    const second = await open()
    const third = await open()
    try {
      expect([first.response.status, second.response.status, third.response.status]).toEqual([200, 200, 429])
      expect(third.response.headers.get("retry-after")).toMatch(/^\d+$/)
      expect(await third.response.json()).toMatchObject({ error: "too_many_streams" })
      first.close()
      let again = await open()
      for (let i = 0; again.response.status !== 200 && i < 40; i++) {
        await sleep(50)
        again = await open()
      }
      expect(again.response.status).toBe(200)
      again.close()
    } finally {
      first.close()
      second.close()
    }
  })
})

describe("example server: address rate limit on early answers", () => {
  let server: Running
  const perAddress = 6

  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_OBJECT_STORE: "memory:",
      HOSTING_DASHBOARD: "off",
      HOSTING_FIXTURES: fixtures,
      HOSTING_RATE_LIMIT_IP: `${perAddress}/3600`
    })
  })
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop()
  })

  it("cached anonymous agent reads (answered before routing) count against the address; X-Forwarded-For is not trusted by default", async () => {
    // alice's first request is charged to the address (1); then her token is known and charged apart.
    const registered = await call(server, "POST", "/agents/acme/helper/register", "alice-token", {
      build_id: "b-1",
      registry: "ghcr.io/acme",
      spec_content: "name: helper\ndescription: Helps\n"
    })
    expect(registered.status).toBe(201)
    expect((await call(server, "POST", "/agents/acme/helper/publish", "alice-token", { build_id: "b-1", version: "1.0.0" })).status).toBe(201)
    const statuses: Array<number> = []
    let refused: Response | undefined
    for (let i = 0; i < perAddress + 4; i++) {
      // A made-up X-Forwarded-For on each read: not trusted, so it changes nothing.
      const response = await fetch(`${server.baseUrl}/agents/acme/helper`, { headers: { "x-forwarded-for": `198.51.100.${i}` } })
      statuses.push(response.status)
      if (response.status === 429) refused ??= response
      else await response.arrayBuffer()
    }
    // The first reads are routed and fill the cache; later ones are answered early, and are charged all the same.
    expect(statuses).toEqual([...Array(perAddress - 1).fill(200), ...Array(5).fill(429)])
    expect(refused!.headers.get("retry-after")).toMatch(/^\d+$/)
    expect(refused!.headers.get("ratelimit-limit")).toBe(String(perAddress))
    expect(await refused!.json()).toMatchObject({ error: "rate_limited" })
    // The token holder is not held back by the address's budget.
    expect((await call(server, "GET", "/agents/acme/helper", "alice-token")).status).toBe(200)
  })

  it("a bad limit or proxy setting stops the server with a line naming the variable", async () => {
    const badRate = await runToExit({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_RATE_LIMIT: "lots" })
    expect(badRate.code).not.toBe(0)
    expect(badRate.output).toContain("HOSTING_RATE_LIMIT")
    const badTimeouts = await runToExit({
      HOSTING_DATABASE_URL: "sqlite::memory:",
      HOSTING_HEADERS_TIMEOUT_MS: "5000",
      HOSTING_REQUEST_TIMEOUT_MS: "1000"
    })
    expect(badTimeouts.code).not.toBe(0)
    expect(badTimeouts.output).toContain("HOSTING_HEADERS_TIMEOUT_MS")
  })
})
