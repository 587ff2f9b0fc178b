import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { HttpAgentRuntime } from "@hosting/agent-runtime-http"
import { AgentRuntime, Conversation, Deployment, Ids } from "@hosting/core"
import { AgentRuntimeSuite } from "@hosting/testing"
import {
  Config,
  ConfigProvider,
  DateTime,
  Deferred,
  Effect,
  Fiber,
  Layer,
  Option,
  Stream,
  Tracer
} from "effect"
import { createServer } from "node:net"
import * as FakeAgent from "./FakeAgent.js"
import { delta, finish } from "./FakeAgent.js"

type HttpAgentRuntimeConfig = HttpAgentRuntime.HttpAgentRuntimeConfig

/** The runtime on another `HttpClient` than Node's: `make` with the platform's fetch client. */
const overFetch = (config: HttpAgentRuntimeConfig = {}) =>
  Layer.effect(AgentRuntime.AgentRuntime, HttpAgentRuntime.make(config)).pipe(Layer.provide(FetchHttpClient.layer))

AgentRuntimeSuite.run("http (fetch client)", FakeAgent.echoBehind(overFetch))
AgentRuntimeSuite.run("http (node client)", FakeAgent.echoBehind(HttpAgentRuntime.layer))

let sequence = 0
const at = DateTime.unsafeMake("2026-11-01T10:00:00.000Z")

const deployment = (spec: Record<string, unknown> = {}) =>
  new Deployment.DeploymentRecord({
    id: Deployment.DeploymentId.make(`dep-${++sequence}`),
    account_id: Ids.AccountId.make("acc-1"),
    account: Ids.AccountName.make("acme"),
    publisher_id: Ids.AccountId.make("acc-1"),
    publisher: Ids.AccountName.make("acme"),
    agent_name: Ids.AgentName.make("helper"),
    build_id: Ids.BuildId.make("b-1"),
    namespace: "acme-helper",
    status: "running",
    deployed_at: at,
    undeployed_at: Option.none(),
    spec
  })

const message = (
  role: "user" | "assistant",
  content: string,
  options: { status?: Conversation.MessageStatus; files?: ReadonlyArray<string> } = {}
) =>
  new Conversation.Message({
    message_id: Conversation.MessageId.make(`m-${++sequence}`),
    role,
    content,
    attachments: (options.files ?? []).map((filename) => new Conversation.Attachment({ key: `k-${filename}`, filename })),
    timestamp: at,
    status: options.status ?? "complete"
  })

const conversation = () => Conversation.ConversationId.make(globalThis.crypto.randomUUID())

const turn = (spec: Record<string, unknown> = {}, content = "Hello?"): AgentRuntime.Turn => ({
  deployment: deployment(spec),
  conversation: conversation(),
  history: [],
  message: message("user", content)
})

/** The runtime through its public layer, pointed at a fake agent. */
const runtimeFor = (
  agent: FakeAgent.FakeAgent,
  config: HttpAgentRuntimeConfig = {},
  client: Client = "fetch"
) =>
  Effect.map(
    Effect.provide(AgentRuntime.AgentRuntime, clients[client]({ endpointFor: () => agent.url, ...config })),
    streamed
  )

/** The runtime over `fetch` (`make` with the platform's fetch client) and over Node's client (`layer`): every check below runs on both. */
const clients = { fetch: overFetch, node: HttpAgentRuntime.layer }
type Client = keyof typeof clients

/** The runtime's one method seen as a stream (`AgentRuntime.replyStream`), which every check below reads. */
const streamed = (runtime: AgentRuntime.AgentRuntime["Type"]) => ({
  reply: (turn: AgentRuntime.Turn) => AgentRuntime.replyStream(runtime, turn)
})

/** The chunks that arrived and the error that ended the reply. */
const chunksThenError = (stream: Stream.Stream<string, AgentRuntime.AgentError>) =>
  Effect.gen(function*() {
    const chunks: Array<string> = []
    const error = yield* stream.pipe(
      Stream.runForEach((chunk) => Effect.sync(() => chunks.push(chunk))),
      Effect.flip
    )
    return { chunks, error }
  })

/** Bounded wait for the agent to see the connection of the request close. */
const closedWithin = (agent: FakeAgent.FakeAgent) =>
  agent.requestConnectionClosed.pipe(
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the agent's connection stayed open") })
  )

/** A loopback port nothing listens on: bound once, then closed. */
const closedPort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as { port: number }
    server.close(() => resume(Effect.succeed(port)))
  })
})

describe("HttpAgentRuntime: the request", () => {
  it("the default endpoint is the spec's endpoint, else the agent's Service on spec.port or 8080", () => {
    expect(HttpAgentRuntime.defaultEndpoint(deployment({ endpoint: "http://127.0.0.1:9000" }))).toBe("http://127.0.0.1:9000")
    expect(HttpAgentRuntime.defaultEndpoint(deployment({ port: 9000 })))
      .toBe("http://helper.acme-helper.svc.cluster.local:9000")
    expect(HttpAgentRuntime.defaultEndpoint(deployment({ port: "not a port", endpoint: 42 })))
      .toBe("http://helper.acme-helper.svc.cluster.local:8080")
  })

  it("the default model is the spec's model, else the agent's name", () => {
    expect(HttpAgentRuntime.defaultModel(deployment({ model: "llama-3.1-8b" }))).toBe("llama-3.1-8b")
    expect(HttpAgentRuntime.defaultModel(deployment({ model: { name: "x" } }))).toBe("helper")
  })

  it("the completions URL is <base>/v1/chat/completions, whether or not the base names /v1", () => {
    expect(HttpAgentRuntime.completionsUrl("http://127.0.0.1:9000")).toEqual(Option.some("http://127.0.0.1:9000/v1/chat/completions"))
    expect(HttpAgentRuntime.completionsUrl("http://a.b:1/api/v1/")).toEqual(Option.some("http://a.b:1/api/v1/chat/completions"))
    expect(HttpAgentRuntime.completionsUrl("https://a.b/v1/chat/completions")).toEqual(Option.some("https://a.b/v1/chat/completions"))
    expect(HttpAgentRuntime.completionsUrl("ftp://a.b")).toEqual(Option.none())
    expect(HttpAgentRuntime.completionsUrl("not a url")).toEqual(Option.none())
  })

  it("the messages are the history in order without unfinished replies, then the turn; files are named", () => {
    const messages = HttpAgentRuntime.chatMessages({
      deployment: deployment(),
      conversation: conversation(),
      history: [
        message("user", "Hi"),
        message("assistant", "Hello! How can I help?"),
        message("user", "Summarise this", { files: ["report.pdf"] }),
        message("assistant", "The report sa", { status: "cancelled" }),
        message("assistant", "", { status: "failed" }),
        message("user", "", { files: ["a.png", "b.png"] })
      ],
      message: message("user", "And now?")
    })
    expect(messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello! How can I help?" },
      { role: "user", content: "Summarise this\n\n[Attached files: report.pdf]" },
      { role: "user", content: "[Attached files: a.png, b.png]" },
      { role: "user", content: "And now?" }
    ])
  })
})

describe.each(["fetch", "node"] as const)("HttpAgentRuntime against fake agents (%s client)", (client) => {
  it.live("streams the SSE chunks in order and sends the history, the model and stream: true", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        x.startEvents()
        x.event({ choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] })
        x.raw(": keep-alive\n\n")
        for (const word of ["Bonjour", ", ", "ça va"]) {
          await x.sleep(5)
          x.event(delta(word))
        }
        // One event split across writes, with a two-byte character cut in half.
        const bytes = Buffer.from(`data: ${JSON.stringify(delta(" très"))}\n\n`, "utf8")
        const cut = bytes.indexOf(0xc3) + 1
        x.raw(bytes.subarray(0, cut))
        await x.sleep(5)
        x.raw(bytes.subarray(cut))
        x.event(delta(" bien"))
        x.event(finish)
        x.event("[DONE]")
        x.res.end()
      })
      const runtime = yield* AgentRuntime.AgentRuntime.pipe(Effect.provide(clients[client]()))
      const history = [message("user", "Salut"), message("assistant", "Salut !"), message("assistant", "Sal", { status: "failed" })]
      const chunks = yield* AgentRuntime.replyStream(runtime, {
        deployment: deployment({ endpoint: agent.url, model: "tiny-model" }),
        conversation: conversation(),
        history,
        message: message("user", "Comment ça va ?")
      }).pipe(Stream.runCollect)

      expect([...chunks]).toEqual(["Bonjour", ", ", "ça va", " très", " bien"])
      expect(agent.received).toHaveLength(1)
      const [request] = agent.received
      expect(request!.method).toBe("POST")
      expect(request!.path).toBe("/v1/chat/completions")
      expect(request!.headers["content-type"]).toMatch(/^application\/json/)
      expect(request!.body).toEqual({
        model: "tiny-model",
        stream: true,
        messages: [
          { role: "user", content: "Salut" },
          { role: "assistant", content: "Salut !" },
          { role: "user", content: "Comment ça va ?" }
        ]
      })
    }).pipe(Effect.scoped))

  it.live("takes a non-streaming JSON answer as one chunk", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make((x) => {
        x.res.writeHead(200, { "content-type": "application/json; charset=utf-8" })
        x.res.end(JSON.stringify({
          id: "chatcmpl-1",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "The whole answer at once." }, finish_reason: "stop" }]
        }))
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      const chunks = yield* runtime.reply(turn()).pipe(Stream.runCollect)
      expect([...chunks]).toEqual(["The whole answer at once."])
      expect((agent.received[0]!.body as { model: string }).model).toBe("helper")
    }).pipe(Effect.scoped))

  it.live("a stalled agent fails after idleTimeout with what came before delivered, and the connection is closed", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        x.startEvents()
        x.event(delta("Thinking"))
        await x.sleep(60_000)
      })
      const runtime = yield* runtimeFor(agent, { idleTimeout: "200 millis" }, client)
      const { chunks, error } = yield* chunksThenError(runtime.reply(turn()))
      expect(chunks).toEqual(["Thinking"])
      expect(error).toBeInstanceOf(AgentRuntime.AgentError)
      expect(error.message).toBe("The agent stopped answering for 200 ms")
      yield* closedWithin(agent)
      expect(agent.answerFinished()).toBe(false)
    }).pipe(Effect.scoped))

  it.live("a wall clock that jumps forward while the agent answers steadily does not count as silence", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        x.startEvents()
        for (let i = 0; i < 6; i++) {
          x.event(delta(`${i}`))
          await x.sleep(60)
        }
        x.event("[DONE]")
        x.res.end()
      })
      const runtime = yield* runtimeFor(agent, { idleTimeout: "200 millis" }, client)
      // Each reading of the wall clock an hour past the last, as a clock stepped forward again and again.
      const wallClock = Date.now
      let steps = 0
      Date.now = () => wallClock() + ++steps * 3_600_000
      const text = yield* runtime.reply(turn()).pipe(
        Stream.mkString,
        Effect.ensuring(Effect.sync(() => (Date.now = wallClock)))
      )
      expect(text).toBe("012345")
    }).pipe(Effect.scoped))

  it.live("an agent that never sends its headers fails after connectTimeout, and the connection is closed", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        await x.sleep(60_000)
      })
      const runtime = yield* runtimeFor(agent, { connectTimeout: "300 millis" }, client)
      const { chunks, error } = yield* chunksThenError(runtime.reply(turn()))
      expect(chunks).toEqual([])
      expect(error.message).toBe("The agent did not answer within 300 ms")
      yield* closedWithin(agent)
    }).pipe(Effect.scoped))

  it.live("a reply that streams past connectTimeout, its headers in time, completes whole", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        x.startEvents()
        x.event(delta("Early"))
        await x.sleep(400)
        x.event(delta(" and late"))
        x.event(finish)
        x.event("[DONE]")
        x.res.end()
      })
      const runtime = yield* runtimeFor(agent, { connectTimeout: "150 millis" }, client)
      const chunks = yield* runtime.reply(turn()).pipe(Stream.runCollect)
      expect([...chunks].join("")).toBe("Early and late")
    }).pipe(Effect.scoped))

  it.live("an agent that dies mid-reply fails as broken off, after the chunks it sent", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        x.startEvents()
        x.event(delta("First"))
        x.event(delta(" second"))
        await x.sleep(50)
        x.res.socket?.destroy()
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      const { chunks, error } = yield* chunksThenError(runtime.reply(turn()))
      expect(chunks).toEqual(["First", " second"])
      expect(error.message).toBe("The agent's reply broke off")
      expect(error.cause).toBeDefined()
    }).pipe(Effect.scoped))

  it.live("an answer that ends with neither [DONE] nor a finish_reason broke off", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make((x) => {
        x.startEvents()
        x.event(delta("Half an"))
        x.res.end()
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      const { chunks, error } = yield* chunksThenError(runtime.reply(turn()))
      expect(chunks).toEqual(["Half an"])
      expect(error.message).toBe("The agent's reply broke off")
    }).pipe(Effect.scoped))

  it.live("an answer that ends with a finish_reason but no [DONE] is complete", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make((x) => {
        x.startEvents()
        x.event(delta("Short."))
        x.event(finish)
        x.res.end()
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      expect([...yield* runtime.reply(turn()).pipe(Stream.runCollect)]).toEqual(["Short."])
    }).pipe(Effect.scoped))

  it.live("an error event from the agent fails the reply without its text in the message", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make((x) => {
        x.startEvents()
        x.event(delta("Let me"))
        x.event({ error: { message: "CUDA out of memory at /srv/model.py:42", type: "server_error" } })
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      const { chunks, error } = yield* chunksThenError(runtime.reply(turn()))
      expect(chunks).toEqual(["Let me"])
      expect(error.message).toBe("The agent reported an error")
      expect(JSON.stringify(error.cause)).toContain("CUDA out of memory")
    }).pipe(Effect.scoped))

  it.live("an agent that answers 500 fails with the status only; the body stays in the cause", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make((x) => {
        x.res.writeHead(500, { "content-type": "text/plain" })
        x.res.end("Traceback: secret internal path /srv/agent/main.py")
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      const { chunks, error } = yield* chunksThenError(runtime.reply(turn()))
      expect(chunks).toEqual([])
      expect(error.message).toBe("The agent answered 500")
      expect(error.message).not.toContain("secret")
      expect(String(error.cause)).toContain("secret internal path")
    }).pipe(Effect.scoped))

  it.live("a closed port is not reachable", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const runtime = yield* AgentRuntime.AgentRuntime.pipe(
        Effect.provide(clients[client]({ endpointFor: () => `http://127.0.0.1:${port}` }))
      )
      const { chunks, error } = yield* chunksThenError(AgentRuntime.replyStream(runtime, turn()))
      expect(chunks).toEqual([])
      expect(error.message).toBe("The agent is not reachable")
      expect(error.cause).toBeDefined()
    }))

  it.live("an endpoint that is not an http(s) URL fails without a request", () =>
    Effect.gen(function*() {
      const runtime = yield* AgentRuntime.AgentRuntime.pipe(Effect.provide(clients[client]()))
      const error = yield* AgentRuntime.replyStream(runtime, turn({ endpoint: "file:///etc/passwd" })).pipe(Stream.runDrain, Effect.flip)
      expect(error.message).toBe("The agent's endpoint is not a valid http(s) URL")
    }))

  it.live("interrupting the reply aborts the request: the agent sees its connection close", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(async (x) => {
        x.startEvents()
        x.event(delta("Once upon a time"))
        // Keeps the answer going (bounded) so that only an abort ends the connection early.
        for (let i = 0; i < 200; i++) {
          await x.sleep(25)
          x.event(delta("."))
        }
        x.event("[DONE]")
        x.res.end()
      })
      const runtime = yield* runtimeFor(agent, {}, client)
      const first = yield* Deferred.make<string>()
      const fiber = yield* runtime.reply(turn()).pipe(
        Stream.runForEach((chunk) => Deferred.succeed(first, chunk)),
        Effect.fork
      )
      expect(yield* Deferred.await(first)).toBe("Once upon a time")
      yield* Fiber.interrupt(fiber)
      yield* closedWithin(agent)
      expect(agent.answerFinished()).toBe(false)
    }).pipe(Effect.scoped))

  it.live("layerConfig reads extra headers through Config; their values stay out of the trace", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(FakeAgent.answers(() => "ok"))
      const spans: Array<Tracer.Span> = []
      const tracer = yield* Effect.tracer
      const recording = Tracer.make({
        span: (...args) => {
          const span = tracer.span(...args)
          spans.push(span)
          return span
        },
        context: (f, fiber) => tracer.context(f, fiber)
      })
      const layer = HttpAgentRuntime.layerConfig({
        endpointFor: Config.succeed(() => agent.url),
        idleTimeout: Config.duration("AGENT_IDLE_TIMEOUT"),
        headers: { "x-agent-key": Config.redacted("AGENT_KEY") }
      })
      const runtime = yield* AgentRuntime.AgentRuntime.pipe(
        Effect.provide(layer),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["AGENT_KEY", "k-secret-123"], ["AGENT_IDLE_TIMEOUT", "5 seconds"]])))
      )
      const chunks = yield* AgentRuntime.replyStream(runtime, turn()).pipe(Stream.runCollect, Effect.withTracer(recording))
      expect([...chunks]).toEqual(["ok"])
      expect(agent.received[0]!.headers["x-agent-key"]).toBe("k-secret-123")

      const reply = spans.find((span) => span.name === "HttpAgentRuntime.reply")
      expect(reply).toBeDefined()
      expect(reply!.attributes.get("hosting.namespace")).toBe("acme-helper")
      const recorded = spans.flatMap((span) => [...span.attributes.values()].map(String))
      expect(recorded.some((value) => value.includes("k-secret-123"))).toBe(false)
    }).pipe(Effect.scoped))
})

describe("HttpAgentRuntime: trace context", () => {
  for (const client of ["fetch", "node"] as const) {
    it.live(`${client}: while a tracer is on, the agent's request carries a traceparent of the turn's trace; with it off, none`, () =>
      Effect.gen(function*() {
        const agent = yield* FakeAgent.make(FakeAgent.echo)
        const runtime = yield* runtimeFor(agent, {}, client)
        const turnSpan = yield* Effect.makeSpanScoped("turn")
        yield* runtime.reply(turn()).pipe(Stream.runDrain, Effect.withParentSpan(turnSpan))
        yield* runtime.reply(turn()).pipe(Stream.runDrain, Effect.withParentSpan(turnSpan), Effect.withTracerEnabled(false))
        const [traced, untraced] = agent.received.map((request) => request.headers["traceparent"])
        expect(traced).toMatch(new RegExp(`^00-${turnSpan.traceId}-[0-9a-f]{16}-01$`))
        expect(untraced).toBeUndefined()
      }).pipe(Effect.scoped))

    it.live(`${client}: the turn's own traceparent goes to the agent while no tracer is on; a tracer's span wins over it`, () =>
      Effect.gen(function*() {
        const agent = yield* FakeAgent.make(FakeAgent.echo)
        const runtime = yield* runtimeFor(agent, {}, client)
        const own = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        const turnSpan = yield* Effect.makeSpanScoped("turn")
        yield* runtime.reply({ ...turn(), traceparent: own }).pipe(Stream.runDrain, Effect.withTracerEnabled(false))
        yield* runtime.reply({ ...turn(), traceparent: own }).pipe(Stream.runDrain, Effect.withParentSpan(turnSpan))
        const [untraced, traced] = agent.received.map((request) => request.headers["traceparent"])
        expect(untraced).toBe(own)
        expect(traced).toMatch(new RegExp(`^00-${turnSpan.traceId}-[0-9a-f]{16}-01$`))
      }).pipe(Effect.scoped))
  }
})

describe("HttpAgentRuntime.layer: kept-alive connections", () => {
  it.live("replies one after another share one connection to the agent", () =>
    Effect.gen(function*() {
      let answered = 0
      const agent = yield* FakeAgent.make(FakeAgent.answers(() => `reply ${++answered}`))
      const runtime = yield* runtimeFor(agent, {}, "node")
      const replies = []
      for (let i = 0; i < 3; i++) {
        replies.push(yield* runtime.reply(turn()).pipe(Stream.mkString))
        // The next turn comes later: the connection goes back to the pool once the answer's end is read.
        yield* Effect.sleep("20 millis")
      }
      expect(replies).toEqual(["reply 1", "reply 2", "reply 3"])
      const ports = agent.received.map((r) => r.clientPort)
      expect(new Set(ports).size).toBe(1)
    }).pipe(Effect.scoped))

  it.live("a reply that ended leaves no timer of its own behind: an embedder's process can exit", () =>
    Effect.gen(function*() {
      const agent = yield* FakeAgent.make(FakeAgent.answers(() => "answered"))
      // Long timeouts: a timer the reply left behind (its idle watch, its connect timeout) would still be pending.
      const runtime = yield* runtimeFor(agent, { idleTimeout: "1 hour", connectTimeout: "2 hours" }, "node")
      const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length
      // After a first reply: its kept-alive connection's own idle timers (client's and agent's) are counted too.
      expect(yield* runtime.reply(turn()).pipe(Stream.mkString)).toBe("answered")
      const before = timers()
      for (let i = 0; i < 5; i++) expect(yield* runtime.reply(turn()).pipe(Stream.mkString)).toBe("answered")
      // Five replies' watches left behind would be five timers more.
      expect(timers()).toBeLessThanOrEqual(before)
    }).pipe(Effect.scoped))

  it.live("a request cut by the agent on a reused connection, before any answer, is sent again on a new one", () =>
    Effect.gen(function*() {
      const used = new Set<number | undefined>()
      const agent = yield* FakeAgent.make((x) => {
        const port = x.req.socket.remotePort
        // The second request on a connection meets it closing, as when the agent's keep-alive timeout ends just then.
        if (used.has(port)) return void x.req.socket.resetAndDestroy()
        used.add(port)
        x.startEvents()
        x.event(delta("answered"))
        x.event("[DONE]")
        x.res.end()
      })
      const runtime = yield* runtimeFor(agent, {}, "node")
      expect(yield* runtime.reply(turn()).pipe(Stream.mkString)).toBe("answered")
      yield* Effect.sleep("20 millis")
      expect(yield* runtime.reply(turn()).pipe(Stream.mkString)).toBe("answered")
      const ports = agent.received.map((r) => r.clientPort)
      expect(ports).toHaveLength(3)
      expect(ports[1]).toBe(ports[0])
      expect(ports[2]).not.toBe(ports[0])
    }).pipe(Effect.scoped))
})
