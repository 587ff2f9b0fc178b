/**
 * The example server as users run it: configuration from the environment,
 * fixtures, the listening line, the catalog flow over HTTP, a clean stop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, runToExit, type Running, start, writeFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-server-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const fixtures = writeFixtures(dir)

describe("example server", () => {
  let server: Running
  const database = join(dir, "data", "hosting.db")

  beforeAll(async () => {
    server = await start({
      HOSTING_DATABASE_URL: `sqlite:${database}`,
      HOSTING_FIXTURES: fixtures,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      // The fixture's trace is dated 2026-11-01: kept whatever today's date, past the default retention.
      HOSTING_TRACE_RETENTION_DAYS: "0"
    })
  })
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop()
  })

  it("prints one line `listening on http://HOST:PORT/api/v1` once it serves", () => {
    expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/)
    expect(server.output().match(/listening on/g)).toHaveLength(1)
  })

  it("loads the fixtures, deployments, files and traces included", async () => {
    expect(server.output()).toContain("2 users, 1 accounts, 1 deployments, 1 files, 1 traces")
    const download = await fetch(`${server.baseUrl}/deployments/dep-1/files/f-notes/content`, { headers: { authorization: "Bearer alice-token" } })
    expect([download.status, await download.text()]).toEqual([200, "hello"])
    const traces = await call(server, "GET", "/agents/acme/helper/observability/traces", "bob-token")
    expect(traces).toEqual({
      status: 200,
      body: {
        traces: [{
          trace_id: "t-1",
          name: "chat",
          status: "ok",
          latency_ms: 12.5,
          input: "hi",
          output: "hello",
          timestamp: "2026-11-01T10:00:00.000Z",
          model: null,
          usage: null
        }],
        total: 1,
        limit: 50,
        offset: 0,
        next_cursor: null
      }
    })
  })

  it("serves the catalog flow: register, publish, read (with the fixtures' tokens)", async () => {
    const registered = await call(server, "POST", "/agents/acme/helper/register", "alice-token", {
      build_id: "b-1",
      registry: "ghcr.io/acme",
      spec_content: "name: helper\ndescription: Helps\n"
    })
    expect(registered.status).toBe(201)
    expect((await call(server, "POST", "/agents/acme/helper/publish", "bob-token", { build_id: "b-1", version: "1.0.0" })).status).toBe(403)
    const published = await call(server, "POST", "/agents/acme/helper/publish", "alice-token", { build_id: "b-1", version: "1.0.0" })
    expect(published.status).toBe(201)
    const agent = await call(server, "GET", "/agents/acme/helper")
    expect(agent.body.versions.map((v: any) => v.version)).toEqual(["1.0.0"])
    const list = await call(server, "GET", "/agents")
    expect(list.body.agents.map((a: any) => `${a.account}/${a.name}`)).toContain("acme/helper")
  })

  it("the fake cluster starts with the fixtures' objects: the ConfigMap reads and the pod restarts", async () => {
    const map = await call(server, "GET", "/deployments/acme-helper/configmap/helper-env?account=acme", "bob-token")
    expect(map).toEqual({ status: 200, body: { name: "helper-env", namespace: "acme-helper", data: { K: "V" } } })
    const restart = await call(server, "POST", "/deployments/acme-helper/pods/helper-0/restart?account=acme", "bob-token")
    expect(restart).toEqual({ status: 200, body: { status: "restarting", pod: "helper-0" } })
    const history = await call(server, "GET", "/agents/acme/helper/deployment/history", "bob-token")
    expect(history.body.deployments.map((d: any) => d.id)).toEqual(["dep-1"])
  })

  it("stops cleanly on SIGTERM with a stream open, and what it stored is there at the next start", async () => {
    const open = await fetch(`${server.baseUrl}/accounts/acme/events`, { headers: { authorization: "Bearer bob-token" } })
    const reader = open.body!.getReader()
    await reader.read()
    const stopping = Date.now()
    expect(await server.stop("SIGTERM")).toBe(0)
    expect(Date.now() - stopping).toBeLessThan(5_000)
    // the open stream was ended by the server, not left hanging
    while (!(await reader.read().catch(() => ({ done: true }))).done) { /* drain */ }
    server = await start({ HOSTING_DATABASE_URL: `sqlite:${database}`, HOSTING_FIXTURES: fixtures })
    const agent = await call(server, "GET", "/agents/acme/helper")
    expect(agent.status).toBe(200)
    expect(agent.body.versions[0].version).toBe("1.0.0")
  })
})

describe("example server event stream", () => {
  it("sends a heartbeat every HOSTING_HEARTBEAT_MS and the account's build events", async () => {
    const server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_FIXTURES: fixtures, HOSTING_HEARTBEAT_MS: "300" })
    try {
      const controller = new AbortController()
      const response = await fetch(`${server.baseUrl}/accounts/acme/events`, {
        headers: { authorization: "Bearer bob-token" },
        signal: controller.signal
      })
      expect(response.status).toBe(200)
      const reader = response.body!.getReader()
      let text = ""
      const started = Date.now()
      await call(server, "POST", "/agents/acme/helper/register", "alice-token", {
        build_id: "b-9",
        registry: "ghcr.io/acme",
        spec_content: "name: helper\n"
      })
      while ((text.match(/event: heartbeat/g) ?? []).length < 2 && Date.now() - started < 10_000) {
        const { value } = await reader.read()
        text += new TextDecoder().decode(value)
      }
      controller.abort()
      expect(text.startsWith("retry: 3000\nevent: ready\ndata: {\"resync\":false}\n\n")).toBe(true)
      expect(text).toMatch(/id: \d+\nevent: agent.build\ndata: \{"agent":"acme\/helper","build_id":"b-9","status":"registered"\}/)
      expect((text.match(/event: heartbeat\ndata: \{\}/g) ?? []).length).toBeGreaterThanOrEqual(2)
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      await server.stop()
    }
  })
})

describe("example server chat", () => {
  it("chats with the echo agent: send, stream the reply, read the history", async () => {
    const server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_FIXTURES: fixtures, HOSTING_ECHO_DELAY_MS: "1" })
    try {
      const conversation = globalThis.crypto.randomUUID()
      const path = `/deployments/dep-1/messaging/conversations/${conversation}`
      const sent = await call(server, "POST", `${path}/messages`, "bob-token", { content: "ping from the example server" })
      expect(sent.status).toBe(200)
      const deadline = Date.now() + 10_000
      let history: any
      do {
        history = await call(server, "GET", `${path}/messages`, "bob-token")
      } while (history.body.messages.at(-1).status === "streaming" && Date.now() < deadline)
      expect(history.body.messages.map((m: any) => [m.role, m.content, m.status])).toEqual([
        ["user", "ping from the example server", "complete"],
        ["assistant", "ping from the example server", "complete"]
      ])
      const response = await fetch(`${server.baseUrl}${path}/stream`, { headers: { authorization: "Bearer bob-token" } })
      const reader = response.body!.getReader()
      let text = ""
      while (!text.includes("message.completed")) text += new TextDecoder().decode((await reader.read()).value)
      await reader.cancel()
      expect(text).toContain('"content":"ping from the example server"')
    } finally {
      await server.stop()
    }
  })
})

describe("example server configuration", () => {
  it("refuses a bad variable at start with a message naming it", async () => {
    for (const [name, value] of [["HOSTING_PORT", "eighty"], ["HOSTING_DATABASE_URL", "mysql://x"], ["HOSTING_CLUSTER", "docker"], ["HOSTING_OBJECT_STORE", "ftp://x"]]) {
      const result = await runToExit({ [name!]: value!, HOSTING_DATABASE_URL: name === "HOSTING_DATABASE_URL" ? value! : "sqlite::memory:" })
      expect(result.code).not.toBe(0)
      expect(result.output).toContain(name)
    }
  })

  it("HOSTING_TRACES=off makes the traces routes answer 503", async () => {
    const server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_FIXTURES: fixtures, HOSTING_TRACES: "off" })
    try {
      const r = await call(server, "GET", "/agents/acme/helper/observability/traces", "bob-token")
      expect([r.status, r.body.error]).toEqual([503, "service_unavailable"])
    } finally {
      await server.stop()
    }
  })

  it("HOSTING_TRACE_RETENTION_DAYS: the sweep at start deletes traces older than the retention; 0 keeps them; a bad value is refused", async () => {
    // The fixture's trace started on 2026-11-01.
    const age = (Date.now() - Date.parse("2026-11-01T10:00:00Z")) / 86_400_000
    const totalWith = async (days: string) => {
      const server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_FIXTURES: fixtures, HOSTING_TRACE_RETENTION_DAYS: days })
      try {
        let total = -1
        for (let i = 0; i < 50; i++) {
          total = (await call(server, "GET", "/agents/acme/helper/observability/traces", "bob-token")).body.total
          if (total === 0 || days !== "1") break
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
        return total
      } finally {
        await server.stop()
      }
    }
    expect(await totalWith("0")).toBe(1)
    if (age > 1) expect(await totalWith("1")).toBe(0)
    for (const value of ["-1", "soon"]) {
      const result = await runToExit({ HOSTING_TRACE_RETENTION_DAYS: value, HOSTING_DATABASE_URL: "sqlite::memory:" })
      expect(result.code).not.toBe(0)
      expect(result.output).toContain("HOSTING_TRACE_RETENTION_DAYS")
    }
  }, 120_000)

  it("refuses a fixtures file with an unknown key, naming the key", async () => {
    const bad = join(dir, "bad-fixtures.json")
    writeFileSync(bad, JSON.stringify({ users: [], agents: [] }))
    const result = await runToExit({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_FIXTURES: bad })
    expect(result.code).not.toBe(0)
    expect(result.output).toContain("agents")
  })
})
