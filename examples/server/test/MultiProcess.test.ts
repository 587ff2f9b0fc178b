/**
 * Several example-server processes on one Postgres database (issue: several
 * stateless servers behind a load balancer): events, reply streams, the
 * message limit and crash recovery hold across processes.
 */
import { TestDatabase } from "@hosting/storage-postgres/testing"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Running, start, writeFixtures } from "./process.js"
import { readSseBlocks } from "./traffic.js"

const available = await TestDatabase.isAvailable()
const dir = mkdtempSync(join(tmpdir(), "hosting-multi-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The default lease: only the death of a process, which the database tells, closes its replies in time. */
const leaseMs = 30_000

interface SseEvent {
  readonly event: string
  readonly data: any
}

/** Opens a server-sent stream and collects its events; `until` resolves once an event matches. */
const openStream = async (url: string, token: string) => {
  const controller = new AbortController()
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal })
  expect(response.status).toBe(200)
  const events: Array<SseEvent> = []
  const waiters: Array<{ test: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = []
  void (async () => {
    try {
      await readSseBlocks(response.body!, (block) => {
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message"
        const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n")
        const parsed: SseEvent = { event, data: data === "" ? undefined : JSON.parse(data) }
        events.push(parsed)
        for (const w of waiters.splice(0)) (w.test(parsed) ? w.resolve(parsed) : waiters.push(w))
      })
    } catch {
      // aborted
    }
  })()
  return {
    events,
    until: (test: (e: SseEvent) => boolean, timeoutMs = 10_000) =>
      new Promise<SseEvent>((resolve, reject) => {
        const seen = events.find(test)
        if (seen) return resolve(seen)
        const timer = setTimeout(() => reject(new Error(`no matching event within ${timeoutMs} ms: ${JSON.stringify(events)}`)), timeoutMs)
        waiters.push({ test, resolve: (e) => (clearTimeout(timer), resolve(e)) })
      }),
    close: () => controller.abort()
  }
}

const chatPath = (conversation: string) => `/deployments/dep-1/messaging/conversations/${conversation}`

describe.skipIf(!available)(`example servers on one Postgres${available ? "" : ` (skipped: ${TestDatabase.skipReason})`}`, () => {
  let database: Awaited<ReturnType<typeof TestDatabase.create>>
  let a: Running
  let b: Running

  beforeAll(async () => {
    database = await TestDatabase.create()
    const env = {
      HOSTING_DATABASE_URL: database.url,
      HOSTING_FIXTURES: writeFixtures(dir),
      HOSTING_OBJECT_STORE: `fs:${join(dir, "objects")}`,
      HOSTING_ECHO_DELAY_MS: "25",
      HOSTING_REPLY_LEASE_MS: String(leaseMs),
      HOSTING_MESSAGE_LIMIT: "5"
    }
    // One after the other: the first runs the migrations and loads the fixtures; the second finds them done.
    a = await start(env, 30_000)
    b = await start(env, 30_000)
  }, 60_000)

  afterAll(async () => {
    await Promise.all([a, b].map((s) => s?.stop()))
    await database?.drop()
  })

  it("a build registered on A reaches the account's event stream held on B", async () => {
    const stream = await openStream(`${b.baseUrl}/accounts/acme/events`, "bob-token")
    try {
      await stream.until((e) => e.event === "ready")
      const registered = await call(a, "POST", "/agents/acme/helper/register", "alice-token", {
        build_id: "b-multi",
        registry: "ghcr.io/acme",
        spec_content: "name: helper\ndescription: d\n"
      })
      expect(registered.status).toBe(201)
      const event = await stream.until((e) => e.event === "agent.build" && e.data.build_id === "b-multi", 5_000)
      expect(event.data.agent).toBe("acme/helper")
    } finally {
      stream.close()
    }
  })

  it("B's cached anonymous read of an agent follows a version published on A", async () => {
    const spec = { registry: "ghcr.io/acme", spec_content: "name: cached\ndescription: d\n" }
    expect((await call(a, "POST", "/agents/acme/cached/register", "alice-token", { build_id: "c-1", ...spec })).status).toBe(201)
    expect((await call(a, "POST", "/agents/acme/cached/publish", "alice-token", { build_id: "c-1", version: "1.0.0" })).status).toBe(201)
    for (let i = 0; i < 3; i++) expect((await call(b, "GET", "/agents/acme/cached")).body.versions.length).toBe(1)
    expect((await call(a, "POST", "/agents/acme/cached/register", "alice-token", { build_id: "c-2", ...spec })).status).toBe(201)
    expect((await call(a, "POST", "/agents/acme/cached/publish", "alice-token", { build_id: "c-2", version: "1.1.0" })).status).toBe(201)
    const deadline = Date.now() + 3_000
    let versions: Array<string> = []
    while (Date.now() < deadline) {
      versions = (await call(b, "GET", "/agents/acme/cached")).body.versions.map((v: any) => v.version)
      if (versions.length === 2) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(versions).toEqual(["1.1.0", "1.0.0"])
  })

  it("a message sent on A streams its reply on B, every chunk in order, and B's history has it", async () => {
    const conversation = crypto.randomUUID()
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")
    const sent = await call(a, "POST", `${chatPath(conversation)}/messages`, "alice-token", { content: words })
    expect(sent.status).toBe(200)
    const stream = await openStream(`${b.baseUrl}${chatPath(conversation)}/stream`, "alice-token")
    try {
      const completed = await stream.until((e) => e.event === "message.completed", 15_000)
      expect(completed.data.content).toBe(words)
      const deltas = stream.events.filter((e) => e.event === "message.delta").map((e) => e.data)
      expect(deltas.length).toBeGreaterThan(1)
      let text = ""
      for (const d of deltas) {
        expect(d.index).toBe(text.length)
        text += d.delta
      }
      expect(text).toBe(words)
      const history = await call(b, "GET", `${chatPath(conversation)}/messages`, "alice-token")
      expect(history.body.messages.map((m: any) => [m.role, m.status, m.content])).toEqual([
        ["user", "complete", words],
        ["assistant", "complete", words]
      ])
    } finally {
      stream.close()
    }
  })

  it("the first send creates the conversation and the message limit holds when A and B take sends at once", async () => {
    const conversation = crypto.randomUUID()
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call(i % 2 === 0 ? a : b, "POST", `${chatPath(conversation)}/messages`, "alice-token", { content: `m${i}` }))
    )
    const statuses = answers.map((r) => r.status).sort()
    expect(statuses, JSON.stringify(answers)).toEqual([200, 200, 200, 200, 200, 409, 409, 409, 409, 409])
    const list = await call(a, "GET", "/deployments/dep-1/chat/conversations", "alice-token")
    expect(list.status, JSON.stringify(list.body)).toBe(200)
    expect(list.body.conversations.filter((c: any) => c.conversation_id === conversation)).toHaveLength(1)
    const history = await call(b, "GET", `${chatPath(conversation)}/messages`, "alice-token")
    expect(history.body.messages.filter((m: any) => m.role === "user")).toHaveLength(5)
  })

  it("a cancel taken by B stops the reply that A is receiving; the reply ends as cancelled everywhere", async () => {
    const conversation = crypto.randomUUID()
    const words = Array.from({ length: 300 }, (_, i) => `c${i}`).join(" ")
    expect((await call(a, "POST", `${chatPath(conversation)}/messages`, "alice-token", { content: words })).status).toBe(200)
    const stream = await openStream(`${a.baseUrl}${chatPath(conversation)}/stream`, "alice-token")
    try {
      await stream.until((e) => e.event === "message.delta")
      const cancelled = await call(b, "POST", `${chatPath(conversation)}/cancel`, "alice-token")
      expect(cancelled.body.status).toBe("cancelled")
      const failed = await stream.until((e) => e.event === "message.failed", 5_000)
      expect(failed.data.error).toBe("cancelled")
      const history = await call(b, "GET", `${chatPath(conversation)}/messages`, "alice-token")
      const reply = history.body.messages.at(-1)
      expect(reply.status).toBe("cancelled")
      expect(reply.content.length).toBeLessThan(words.length)
    } finally {
      stream.close()
    }
  })

  it("A2A (issue 29): a task streaming on A is read by GetTask on B, and a CancelTask on B stops its reply on A; the task ends canceled", async () => {
    const rpc = (server: Running, body: unknown, signal?: AbortSignal) =>
      fetch(`${server.baseUrl}/deployments/dep-1/a2a`, {
        method: "POST",
        headers: { authorization: "Bearer alice-token", "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...(body as object) }),
        ...(signal === undefined ? {} : { signal })
      })
    const conversation = crypto.randomUUID()
    const words = Array.from({ length: 300 }, (_, i) => `a${i}`).join(" ")
    const controller = new AbortController()
    const streamed = await rpc(a, {
      method: "SendStreamingMessage",
      params: { message: { messageId: crypto.randomUUID(), contextId: conversation, role: "ROLE_USER", parts: [{ text: words }] } }
    }, controller.signal)
    expect(streamed.status).toBe(200)
    const frames: Array<any> = []
    let taskId = ""
    const started = new Promise<void>((resolve) => {
      void readSseBlocks(streamed.body!, (block) => {
        const data = block.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n")
        if (data === "") return
        const frame = JSON.parse(data)
        frames.push(frame)
        if (frame.result?.task !== undefined) taskId = frame.result.task.id
        if (frame.result?.artifactUpdate !== undefined) resolve()
      }).catch(() => undefined)
    })
    try {
      await started
      const got = await (await rpc(b, { method: "GetTask", params: { id: taskId } })).json()
      expect([got.result?.id, got.result?.contextId, got.result?.status?.state]).toEqual([taskId, conversation, "TASK_STATE_WORKING"])
      const cancelled = await (await rpc(b, { method: "CancelTask", params: { id: taskId } })).json()
      expect(cancelled.result?.status?.state).toBe("TASK_STATE_CANCELED")
      const history = async () => (await call(b, "GET", `${chatPath(conversation)}/messages`, "alice-token")).body.messages
      const deadline = Date.now() + 5_000
      while ((await history()).at(-1)?.status !== "cancelled" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      const reply = (await history()).at(-1)
      expect(reply.status).toBe("cancelled")
      expect(reply.content.length).toBeLessThan(words.length)
      // A records the end of its task once its reply has ended: the task reads canceled there too, shortly.
      const stateOnA = async () => (await (await rpc(a, { method: "GetTask", params: { id: taskId } })).json()).result?.status?.state
      const until = Date.now() + 5_000
      while ((await stateOnA()) !== "TASK_STATE_CANCELED" && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
      expect(await stateOnA()).toBe("TASK_STATE_CANCELED")
    } finally {
      controller.abort()
    }
  }, 30_000)

  it("when A dies mid-reply, B closes the reply as failed within 2 s, long before A's lease ends, keeping what arrived", async () => {
    const conversation = crypto.randomUUID()
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ")
    const sent = await call(a, "POST", `${chatPath(conversation)}/messages`, "alice-token", { content: words })
    expect(sent.status).toBe(200)
    const stream = await openStream(`${b.baseUrl}${chatPath(conversation)}/stream`, "alice-token")
    try {
      await stream.until((e) => e.event === "message.delta")
      // Let a flush reach storage, then kill A without a chance to clean up.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const killedAt = Date.now()
      a.child.kill("SIGKILL")
      const failed = await stream.until((e) => e.event === "message.failed", 10_000)
      expect(Date.now() - killedAt).toBeLessThan(2_000)
      expect(failed.data.error).toContain("stopped")
      const list = await call(b, "GET", "/deployments/dep-1/chat/conversations", "alice-token")
      expect(list.body.conversations.find((c: any) => c.conversation_id === conversation).assistant_streaming).toBe(false)
      const history = await call(b, "GET", `${chatPath(conversation)}/messages`, "alice-token")
      const reply = history.body.messages.at(-1)
      expect(reply.status).toBe("failed")
      expect(reply.content.length).toBeGreaterThan(0)
      expect(words.startsWith(reply.content)).toBe(true)
    } finally {
      stream.close()
    }
  }, 30_000)
})
