/**
 * Starting and stopping (issue 23): a request never waits on a server that
 * is not serving yet or any more; `/healthz` and `/readyz` tell probes where
 * the server is; one SQLite file is owned by one process; processes that
 * start together on an empty Postgres database all serve.
 */
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { call, freePort, type Running, runToExit, spawnServer, start, writeFixtures } from "./process.js"
import { sleep } from "./traffic.js"

const pgAvailable = await TestDatabase.isAvailable()

const dirs: Array<string> = []
const servers: Array<Running> = []
const databases: Array<TestDatabase.TestDatabase> = []
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop("SIGKILL")))
  await Promise.all(databases.map((d) => d.drop()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "hosting-startup-"))
  dirs.push(dir)
  return dir
}

const startServer = async (env: Record<string, string>, timeoutMs = 30_000) => {
  const server = await start(env, timeoutMs)
  servers.push(server)
  return server
}

/** What one request on a connection of its own got: an answer, a connection error, or nothing within `hungMs`. */
type Outcome =
  | { readonly kind: "answer"; readonly status: number; readonly body: any; readonly retryAfter: string | undefined }
  | { readonly kind: "error"; readonly code: string }
  | { readonly kind: "hung" }

const hungMs = 5000

const probe = (port: number, path: string) =>
  new Promise<Outcome>((resolve) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, agent: false, timeout: hungMs }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => {
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // not JSON: kept as text
        }
        const retryAfter = response.headers["retry-after"]
        resolve({ kind: "answer", status: response.statusCode ?? 0, body, retryAfter })
      })
    })
    req.on("timeout", () => {
      req.destroy()
      resolve({ kind: "hung" })
    })
    req.on("error", (error: NodeJS.ErrnoException) => resolve({ kind: "error", code: error.code ?? String(error) }))
    req.end()
  })

const describeOutcome = (o: Outcome) => (o.kind === "answer" ? `${o.status} ${JSON.stringify(o.body)}` : o.kind === "error" ? o.code : "hung")

/** Polls `check` every 50 ms until it holds; fails with the last outcome after `timeoutMs`. */
const waitFor = async (what: string, poll: () => Promise<Outcome>, check: (o: Outcome) => boolean, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  let last: Outcome = await poll()
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${describeOutcome(last)} after ${timeoutMs} ms`)
    await sleep(50)
    last = await poll()
  }
  return last
}

/** A server on a port known in advance, with its SQLite file and objects in `dir`. */
const onFiles = (dir: string, port: number) => ({
  HOSTING_PORT: String(port),
  HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`,
  HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`
})

const isStatus = (status: number, error?: string) => (o: Outcome) =>
  o.kind === "answer" && o.status === status && (error === undefined || o.body?.error === error)

describe("a server that starts", () => {
  it("answers every request from the moment its port opens: /healthz 200, the rest 503 `starting` until it serves; none hangs", async () => {
    const dir = tempDir()
    const port = await freePort()
    const child = spawnServer({
      ...onFiles(dir, port),
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off"
    })
    let output = ""
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    const paths = ["/healthz", "/readyz", "/api/v1/agents"]
    const polls: Array<Promise<readonly [string, Outcome]>> = []
    try {
      // From the first instant (refused while nothing listens) until a while after it says it serves.
      const deadline = Date.now() + 30_000
      let servedSince: number | undefined
      for (let i = 0; Date.now() < deadline && (servedSince === undefined || Date.now() - servedSince < 300); i++) {
        const path = paths[i % paths.length]!
        polls.push(probe(port, path).then((outcome) => [path, outcome] as const))
        if (servedSince === undefined && output.includes("listening on")) servedSince = Date.now()
        await sleep(5)
      }
      expect(servedSince, output).toBeDefined()
      const outcomes = await Promise.all(polls)
      const hung = outcomes.filter(([, o]) => o.kind === "hung")
      expect(hung.map(([path]) => path), "requests left unanswered").toEqual([])
      const answers = outcomes.flatMap(([path, o]) => (o.kind === "answer" ? [{ path, ...o }] : []))
      for (const answer of answers) {
        if (answer.path === "/healthz") expect(answer.status).toBe(200)
        else if (answer.status !== 200) {
          expect(answer).toMatchObject({ status: 503, retryAfter: "1", body: { error: "starting", details: expect.any(String) } })
        }
      }
      // The polls met the window between the port opening and the app serving, and the server once it served.
      expect(answers.some((a) => a.status === 503)).toBe(true)
      expect(answers.filter((a) => a.path === "/readyz").at(-1)).toMatchObject({ status: 200, body: { status: "ready" } })
      expect(answers.filter((a) => a.path === "/api/v1/agents").at(-1)?.status).toBe(200)
      // Every error is a connection refused before the port opened.
      expect(new Set(outcomes.flatMap(([, o]) => (o.kind === "error" ? [o.code] : [])))).toEqual(new Set(["ECONNREFUSED"]))
    } finally {
      child.kill("SIGKILL")
    }
  }, 60_000)
})

describe("a server that stops", () => {
  it("on SIGTERM /readyz answers 503 `stopping` at once, requests are served for HOSTING_SHUTDOWN_DELAY_MS, then it exits 0", async () => {
    const dir = tempDir()
    const port = await freePort()
    const server = await startServer({
      ...onFiles(dir, port),
      HOSTING_DASHBOARD: "off",
      HOSTING_SHUTDOWN_DELAY_MS: "2000"
    })
    expect(await probe(port, "/readyz")).toMatchObject({ status: 200, body: { status: "ready" } })
    const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve))
    const signalled = Date.now()
    server.child.kill("SIGTERM")
    const stopping = await waitFor("/readyz after SIGTERM", () => probe(port, "/readyz"), isStatus(503, "stopping"), 1500)
    expect(stopping).toMatchObject({ retryAfter: "1", body: { details: expect.any(String) } })
    expect(await probe(port, "/api/v1/agents")).toMatchObject({ status: 200 })
    expect(await probe(port, "/healthz")).toMatchObject({ status: 200, body: { status: "alive" } })
    expect(Date.now() - signalled).toBeLessThan(2000)
    expect(await exited).toBe(0)
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(2000)
  }, 60_000)
})

describe("a stop with streams open (issue 27)", () => {
  it("an open event stream does not hold the stop: it ends at once, within HOSTING_SHUTDOWN_GRACE_MS, and the process exits 0", async () => {
    const dir = tempDir()
    const port = await freePort()
    const server = await startServer({
      ...onFiles(dir, port),
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off",
      HOSTING_SHUTDOWN_GRACE_MS: "500"
    })
    const stream = await fetch(`${server.baseUrl}/accounts/acme/events`, { headers: { authorization: "Bearer alice-token" } })
    expect(stream.status).toBe(200)
    const reader = stream.body!.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("event: ready")
    const ended = (async () => {
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true as const }))
        if (chunk.done) return Date.now()
      }
    })()
    const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve))
    const signalled = Date.now()
    server.child.kill("SIGTERM")
    expect(await exited).toBe(0)
    const stopped = Date.now() - signalled
    const cut = (await ended) - signalled
    // Streams end with the app (measured: within tens of ms), well inside the grace and the default of 3 s.
    expect(stopped).toBeLessThan(2500)
    expect(cut).toBeLessThan(2500)
  }, 60_000)
})

/** Reads a streamed body until `until` appears in it; `rest` reads on to its end (or until the connection is cut). */
const readUntil = async (response: Response, until: string) => {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  while (!text.includes(until)) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error(`the stream ended before ${JSON.stringify(until)}:\n${text}`)
    text += decoder.decode(chunk.value, { stream: true })
  }
  const rest = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done) return text
      text += decoder.decode(chunk.value, { stream: true })
    }
  })()
  return { head: text, rest }
}

/** A request whose body is sent in two parts: `finish` sends the rest and resolves with the answer. */
const slowPost = (port: number, path: string, token: string, body: string) => {
  const bytes = Buffer.from(body)
  const half = Math.floor(bytes.length / 2)
  const req = httpRequest({
    host: "127.0.0.1",
    port,
    path,
    method: "POST",
    agent: false,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": bytes.length }
  })
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    req.on("response", (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }))
    })
    req.on("error", reject)
  })
  req.write(bytes.subarray(0, half))
  return { finish: () => (req.end(bytes.subarray(half)), answer) }
}

describe("a stop with a request, a stream and a reply in flight (issue 27)", () => {
  it("the request is answered, both streams end at once with a retry hint, the reply is stored as failed with what arrived, within the grace", async () => {
    const dir = tempDir()
    const port = await freePort()
    const env = {
      ...onFiles(dir, port),
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off",
      HOSTING_ECHO_DELAY_MS: "200",
      HOSTING_SHUTDOWN_GRACE_MS: "2000"
    }
    const server = await startServer(env)
    const auth = { authorization: "Bearer alice-token" }
    const events = await readUntil(await fetch(`${server.baseUrl}/accounts/acme/events`, { headers: auth }), "event: ready")
    const conversation = randomUUID()
    const chat = `/deployments/dep-1/messaging/conversations/${conversation}`
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")
    expect((await call(server, "POST", `${chat}/messages`, "alice-token", { content: words })).status).toBe(200)
    const reply = await readUntil(await fetch(`${server.baseUrl}${chat}/stream`, { headers: auth }), "event: message.delta")
    const request = slowPost(port, "/api/v1/tokens", "alice-token", JSON.stringify({ name: "made during the stop", scopes: ["read"] }))
    await sleep(200) // the server has the request's head and half its body

    const exited = new Promise<number | null>((resolve) => server.child.once("exit", resolve))
    const signalled = Date.now()
    server.child.kill("SIGTERM")
    await sleep(300)
    const answered = await request.finish()
    expect(answered.status).toBe(201)
    const [eventsText, replyText] = await Promise.all([events.rest, reply.rest])
    expect(await exited).toBe(0)
    expect(Date.now() - signalled).toBeLessThan(2000 + 1500)

    // Each stream's last frame tells the client to reconnect soon, not all at once (a retry between 250 and 1500 ms).
    for (const text of [eventsText, replyText]) {
      const last = /: the server ended this stream; reconnect to resume it\nretry: (\d+)\n\n$/.exec(text)
      expect(last, text).not.toBeNull()
      expect(Number(last![1])).toBeGreaterThanOrEqual(250)
      expect(Number(last![1])).toBeLessThanOrEqual(1500)
    }
    // The streams ended at once, before the services stopped: the reply was still arriving.
    expect(replyText).not.toContain("event: message.failed")

    // Nothing was lost: after a restart the token made during the stop is there, and the reply is stored as
    // failed with the words that had arrived.
    const again = await startServer(env)
    const tokens = await call(again, "GET", "/tokens", "alice-token")
    expect(tokens.body.tokens.map((t: any) => t.name)).toContain("made during the stop")
    const history = await call(again, "GET", `${chat}/messages`, "alice-token")
    const assistant = history.body.messages.find((m: any) => m.role === "assistant")
    expect(assistant.status).toBe("failed")
    expect(assistant.content.length).toBeGreaterThan(0)
    expect(words.startsWith(assistant.content.trim())).toBe(true)
    expect(assistant.content.trim().length).toBeLessThan(words.length)
    await again.stop()
  }, 60_000)
})

describe("one SQLite file, one process", () => {
  it("a second process on the same file refuses to start with one line naming HOSTING_DATABASE_URL; a killed owner does not block the next", async () => {
    const dir = tempDir()
    const env = {
      HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off"
    }
    const first = await startServer(env)
    const second = await runToExit(env, 60_000)
    expect(second.code).toBe(1)
    const lines = second.output.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^hosting: cannot start: HOSTING_DATABASE_URL: .*in use by another process.*Postgres/)
    // The first one goes on serving.
    const port = Number(new URL(first.baseUrl).port)
    expect(await probe(port, "/readyz")).toMatchObject({ status: 200 })

    expect(await first.stop("SIGKILL")).toBe(null)
    const third = await startServer(env)
    expect(await probe(Number(new URL(third.baseUrl).port), "/readyz")).toMatchObject({ status: 200 })
  }, 90_000)
})

describe.skipIf(!pgAvailable)(`servers on Postgres${pgAvailable ? "" : ` (skipped: ${TestDatabase.skipReason})`}`, () => {
  // That the schema is migrated once is checked on the storage layers (storage-postgres ConcurrentStart.test.ts).
  it("three processes started at once on an empty database all serve", async () => {
    const dir = tempDir()
    const database = await TestDatabase.create()
    databases.push(database)
    const env = {
      HOSTING_DATABASE_URL: database.url,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off",
      // The smallest pool allowed, so that a start waiting on another holds as few connections as it can.
      HOSTING_DATABASE_POOL_SIZE: "3"
    }
    const started = await Promise.all([0, 1, 2].map(() => startServer(env, 90_000)))
    for (const server of started) {
      const port = Number(new URL(server.baseUrl).port)
      expect(await probe(port, "/readyz")).toMatchObject({ status: 200, body: { status: "ready" } })
      // The fixtures are there (loaded by one start or several: each load is idempotent).
      const me = await fetch(`${server.baseUrl}/me`, { headers: { authorization: "Bearer alice-token" } })
      expect(me.status).toBe(200)
    }
  }, 180_000)

  it("refuses HOSTING_DATABASE_POOL_SIZE below 3 in one line (the buses hold two pooled connections; the start would wait forever)", async () => {
    const database = await TestDatabase.create()
    databases.push(database)
    // A start on a busy machine takes a while; the old code never exited at all.
    const result = await runToExit({ HOSTING_DATABASE_URL: database.url, HOSTING_DATABASE_POOL_SIZE: "2", HOSTING_DASHBOARD: "off" }, 60_000)
    expect(result.code).toBe(1)
    expect(result.output.trim().split("\n")).toHaveLength(1)
    expect(result.output).toContain("HOSTING_DATABASE_POOL_SIZE")
  }, 90_000)

  it("/readyz answers 503 `storage_unavailable` while the database refuses connections and 200 once it is back; /healthz stays 200", async () => {
    const dir = tempDir()
    const database = await TestDatabase.create()
    databases.push(database)
    const server = await startServer({
      HOSTING_DATABASE_URL: database.url,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_DASHBOARD: "off"
    })
    const port = Number(new URL(server.baseUrl).port)
    const readyz = () => probe(port, "/readyz")
    await waitFor("/readyz before the outage", readyz, isStatus(200))
    await database.refuseConnections()
    try {
      const down = await waitFor("/readyz during the outage", readyz, isStatus(503, "storage_unavailable"))
      expect(down).toMatchObject({ retryAfter: "5", body: { details: expect.any(String) } })
      expect(await probe(port, "/healthz")).toMatchObject({ status: 200 })
    } finally {
      await database.acceptConnections()
    }
    await waitFor("/readyz after the outage", readyz, isStatus(200))
  }, 60_000)
})

describe("the first start of an instance (issue 26)", () => {
  const codeOf = (output: string) => /setup: {3}([A-Z0-9]{5}(?:-[A-Z0-9]{5}){3})/.exec(output)?.[1]

  it("without users it prints a setup code and writes it beside the SQLite file (0600); setting up spends it; the next start offers none and removes the file", async () => {
    const dir = tempDir()
    const env = {
      HOSTING_DATABASE_URL: `sqlite:${join(dir, "data", "hosting.db")}`,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_DASHBOARD: "off"
    }
    const first = await startServer(env)
    const code = codeOf(first.output())
    expect(code, first.output()).toBeDefined()
    const file = join(dir, "data", "setup-code")
    expect(first.output()).toContain(file)
    expect(readFileSync(file, "utf8").trim()).toBe(code)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const made = await call(first, "POST", "/setup", undefined, { code, user_id: "root", name: "Root" })
    expect(made.status).toBe(201)
    expect((await call(first, "GET", "/me", made.body.token)).body.user).toEqual({ id: "root", name: "Root" })
    expect((await call(first, "POST", "/setup", undefined, { code, user_id: "again" })).status).toBe(409)
    expect(await first.stop()).toBe(0)
    const second = await startServer(env)
    expect(codeOf(second.output())).toBeUndefined()
    expect(existsSync(file)).toBe(false)
    expect((await call(second, "GET", "/me", made.body.token)).status).toBe(200)
  }, 60_000)

  it("with fixtures that bring users there is no setup code", async () => {
    const dir = tempDir()
    const server = await startServer({
      HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`,
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_DASHBOARD: "off"
    })
    expect(codeOf(server.output())).toBeUndefined()
    expect(existsSync(join(dir, "setup-code"))).toBe(false)
  }, 60_000)

  it.skipIf(!pgAvailable)("on Postgres the code is printed, written only where HOSTING_SETUP_CODE_FILE says, and any process's code sets the instance up", async () => {
    const database = await TestDatabase.create()
    databases.push(database)
    const dir = tempDir()
    const file = join(dir, "code")
    const base = { HOSTING_DATABASE_URL: database.url, HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`, HOSTING_DASHBOARD: "off" }
    const plain = await startServer(base)
    expect(plain.output()).toContain("set HOSTING_SETUP_CODE_FILE")
    const withFile = await startServer({ ...base, HOSTING_SETUP_CODE_FILE: file })
    const code = codeOf(withFile.output())
    expect(readFileSync(file, "utf8").trim()).toBe(code)
    // The first process's code works on the second, and spends the second's too.
    const made = await call(withFile, "POST", "/setup", undefined, { code: codeOf(plain.output()), user_id: "root" })
    expect(made.status).toBe(201)
    expect((await call(plain, "POST", "/setup", undefined, { code, user_id: "root2" })).status).toBe(409)
  }, 90_000)
})

describe("main.js migrate (issue 27)", () => {
  it("migrates a new SQLite file and says where the schema stands, again without change; an unknown command is refused", async () => {
    const dir = tempDir()
    const env = { HOSTING_DATABASE_URL: `sqlite:${join(dir, "hosting.db")}`, HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}` }
    for (let round = 0; round < 2; round++) {
      const migrated = await runToExit(env, 60_000, ["migrate"])
      expect(migrated.code, migrated.output).toBe(0)
      expect(migrated.output).toMatch(/^migrate: the schema is at migration (\d+) \(\w+\), the newest of the \1 this build knows$/m)
      expect(migrated.output).not.toContain("listening on")
    }
    const unknown = await runToExit(env, 60_000, ["migrat"])
    expect(unknown.code).toBe(2)
    expect(unknown.output).toContain('unknown command "migrat"')
  }, 120_000)

  it.skipIf(!pgAvailable)("two migrate runs at once on a new Postgres database both end at the newest schema, then a server starts on it", async () => {
    const database = await TestDatabase.create()
    databases.push(database)
    const env = { HOSTING_DATABASE_URL: database.url, HOSTING_OBJECT_STORE: "memory:", HOSTING_DASHBOARD: "off" }
    const runs = await Promise.all([runToExit(env, 60_000, ["migrate"]), runToExit(env, 60_000, ["migrate"])])
    for (const run of runs) {
      expect(run.code, run.output).toBe(0)
      expect(run.output).toMatch(/^migrate: the schema is at migration (\d+) \(\w+\), the newest of the \1 this build knows$/m)
    }
    const server = await startServer(env)
    expect((await fetch(`${server.baseUrl}/agents`)).status).toBe(200)
  }, 120_000)
})
