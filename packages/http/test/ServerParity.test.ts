/**
 * Parity of the servers (issue 24): the hosting API served by
 * `@hosting/http-node`'s NodeServer answers what the same API answers on
 * the platform's reference server (`NodeHttpServer.layerTest` of
 * `@effect/platform-node`, HttpApiBuilder on the platform's Node server).
 *
 * Two servers run side by side, each over its own fresh in-memory storage,
 * seeded the same way in the same order (the shape of `Seed.team` with fixed
 * names, so that both stores hold the same accounts, users and tokens). The
 * same sequence of raw HTTP/1.1 requests goes to both, one server after the
 * other, and each pair of answers is compared: the status, every header but
 * those of the connection (see `ignoredHeaders`), how the body is framed,
 * and the body. Event streams are compared by status, headers and their
 * first frames, read within a bounded time, then closed.
 *
 * Every endpoint of the definition (`ApiRoutes.routes`) has a case here (a
 * new endpoint without one fails the first test): a call without a
 * credential, an authorized call with valid input (on resources made
 * through the API itself), and a call with bad input where the endpoint
 * takes any; event streams also live (an event, a reply, while the stream
 * is open) and resumed. Beside them, what is the server's rather than a
 * route's (`serverCases`): unknown routes, wrong methods, dot segments,
 * bodies past or at their limit (declared, chunked), HEAD on GET routes,
 * kept-alive connections, form and multipart bodies, and a request Node's
 * parser refuses. A third test serves the API extended as an embedder
 * might (the platform's CORS middleware, a middleware setting a cookie).
 *
 * Values that differ between two servers by nature are normalised (see
 * `Normaliser`); where the servers differ on purpose, `intended` says how and
 * why, and the test checks that they differ exactly so. Those cases run
 * last (`lastCases`).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import type * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { describe, expect, it } from "@effect/vitest"
import { Authentication } from "@hosting/api"
import { Cluster, Identity, Ids } from "@hosting/core"
import * as Fixtures from "@hosting/testing/Fixtures"
import { ApiRoutes, BodyLimits } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { Context, DateTime, Effect, Layer, Option } from "effect"
import * as Net from "node:net"
import * as HttpTestServer from "./HttpTestServer.js"
import { otlpExport, otlpTraceId } from "./RouteHarness.js"

// ---------------------------------------------------------------------------
// The two servers

/** The same options for both: a rate limit on a frozen clock, so that its headers are compared too and never depend on timing. */
const serverLayer = (server: typeof NodeServer.layerTest) =>
  HttpTestServer.layer({
    server,
    echo: { delay: 0 },
    rateLimit: { perUser: { requests: 100_000, seconds: 60 }, perIp: { requests: 100_000, seconds: 60 }, now: () => 0 }
  })

/** The platform's test server; it gives no `NodeServer` service, which nothing of the API needs. */
const platformServer = NodeHttpServer.layerTest as unknown as typeof NodeServer.layerTest

type Services = Layer.Layer.Success<ReturnType<typeof serverLayer>>

interface Side {
  readonly name: "ours" | "platform"
  readonly port: number
  readonly context: Context.Context<Services>
  /** What this server's earlier answers gave (ids, keys, codes), for the requests that follow. */
  readonly state: Record<string, string>
  readonly normaliser: Normaliser
}

// ---------------------------------------------------------------------------
// The seeded data: Seed.team's shape with fixed names, the same on both servers

const account = "parity-team"
const renamed = "parity-renamed"
const people = ["owner", "admin", "member", "outsider", "other"] as const
type Person = typeof people[number]
const userId = (p: Person) => `parity-${p}`
const tokenOf = (p: Person) => `parity-${p}-token`
const expiredToken = "parity-expired-token"
const badToken = "parity-nobody-was-given-this"

const seed = Effect.gen(function*() {
  yield* Fixtures.load({
    users: people.map((p) => ({ id: Ids.UserId.make(userId(p)), name: `The ${p}`, tokens: [tokenOf(p)] })),
    accounts: [
      {
        name: Ids.AccountName.make(account),
        members: [
          { user: Ids.UserId.make(userId("owner")), role: "owner" },
          { user: Ids.UserId.make(userId("admin")), role: "admin" },
          { user: Ids.UserId.make(userId("member")), role: "member" },
          { user: Ids.UserId.make(userId("other")), role: "member" }
        ]
      },
      { name: Ids.AccountName.make("parity-elsewhere"), members: [{ user: Ids.UserId.make(userId("outsider")), role: "owner" }] }
    ]
  })
  const identity = yield* Identity.Identity
  yield* identity.issue(Ids.UserId.make(userId("owner")), expiredToken, Option.some(DateTime.unsafeMake(0)))
}).pipe(Effect.orDie)

// ---------------------------------------------------------------------------
// A raw HTTP/1.1 client: requests as bytes, answers with every header line

interface Call {
  readonly method: string
  /** The request target, sent as it is. */
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Buffer
  /** A body sent chunked, in these parts (no Content-Length). */
  readonly chunks?: ReadonlyArray<string>
  /** Keep the connection open after this request (`connection: keep-alive`) and send `then` on it. */
  readonly then?: Call
  /** Sent on a connection of its own once this call's answer has its head (what a stream then shows live); its answer is not read. */
  readonly during?: Call
  /** Bytes sent instead of a request made from the fields above. */
  readonly raw?: string
}

interface Wire {
  /** Undefined when the connection ended without an answer. */
  readonly status: number | undefined
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
  /** How the body was delimited: by its length, in chunks, by the connection's end, or not at all (HEAD, 204, 304). */
  readonly framing: "length" | "chunked" | "close" | "none"
  /** What went wrong on the connection, if anything did. */
  readonly problem: string | undefined
  /** The answer to the request sent after this one on the same connection. */
  readonly next?: Wire | undefined
}

/** How much of an answer to read. */
type Read =
  | { readonly kind: "whole" }
  /** HEAD: the head, whatever it says of a body, and what else comes within a moment (nothing should). */
  | { readonly kind: "head" }
  /**
   * An event stream: frames until the `count`-th (default first) that
   * matches `until` (that one included), or all that came when `ms` pass;
   * then the connection is closed.
   */
  | { readonly kind: "frames"; readonly until?: RegExp; readonly count?: number; readonly ms: number }

const crlf = "\r\n"

/** The request's bytes: a Host with the port, `connection: close` (unless another request follows), a length for a whole body. */
const encode = (call: Call, port: number): Buffer => {
  if (call.raw !== undefined) return Buffer.from(call.raw)
  const headers: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    connection: call.then === undefined ? "close" : "keep-alive",
    ...call.headers
  }
  let body: Buffer = Buffer.alloc(0)
  if (call.chunks !== undefined) {
    headers["transfer-encoding"] = "chunked"
    body = Buffer.from(call.chunks.map((c) => `${Buffer.byteLength(c).toString(16)}${crlf}${c}${crlf}`).join("") + `0${crlf}${crlf}`)
  } else if (call.body !== undefined) {
    body = Buffer.isBuffer(call.body) ? call.body : Buffer.from(call.body)
    headers["content-length"] ??= String(body.length)
  }
  const head = `${call.method} ${call.path} HTTP/1.1${crlf}` + Object.entries(headers).map(([n, v]) => `${n}: ${v}${crlf}`).join("")
  const bytes = Buffer.concat([Buffer.from(`${head}${crlf}`), body])
  return call.then === undefined ? bytes : Buffer.concat([bytes, encode(call.then, port)])
}

/** The methods of a call and the calls after it on its connection, in order. */
const methodsOf = (call: Call): Array<string> => [call.method, ...(call.then === undefined ? [] : methodsOf(call.then))]

/** The complete chunks of a chunked body so far, whether its last chunk came, and where the body ended. */
const dechunk = (data: Buffer): { readonly body: Buffer; readonly done: boolean; readonly end: number } => {
  const parts: Array<Buffer> = []
  let at = 0
  while (true) {
    const lineEnd = data.indexOf(crlf, at)
    if (lineEnd < 0) return { body: Buffer.concat(parts), done: false, end: at }
    const size = parseInt(data.subarray(at, lineEnd).toString("latin1"), 16)
    if (size === 0) {
      // The last chunk, then (no trailers here) the empty line.
      const close = data.indexOf(crlf, lineEnd + 2)
      return { body: Buffer.concat(parts), done: close >= 0, end: close < 0 ? data.length : close + 2 }
    }
    if (lineEnd + 2 + size + 2 > data.length) return { body: Buffer.concat(parts), done: false, end: at }
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** The frames of an event stream up to the `count`-th that matches `until` (all complete ones when there is none such). */
const framesUntil = (text: string, until: RegExp | undefined, count = 1): { readonly text: string; readonly matched: boolean } => {
  const frames = text.split("\n\n")
  frames.pop() // an incomplete frame, or the empty rest after the last complete one
  const kept: Array<string> = []
  let seen = 0
  for (const frame of frames) {
    kept.push(`${frame}\n\n`)
    if (until?.test(frame) === true && ++seen === count) return { text: kept.join(""), matched: true }
  }
  return { text: kept.join(""), matched: false }
}

/**
 * One answer at the start of `data`, if it is complete (or the connection
 * `ended`): the answer and where it ended. 1xx answers are skipped.
 */
const parseAnswer = (
  data: Buffer,
  method: string,
  read: Read,
  ended: boolean,
  problem: string | undefined
): { readonly wire: Wire; readonly end: number } | undefined => {
  const headEnd = data.indexOf(`${crlf}${crlf}`)
  if (headEnd < 0) {
    return ended
      ? { wire: { status: undefined, headers: [], body: data.toString("utf8"), framing: "close", problem: problem ?? "closed before an answer" }, end: data.length }
      : undefined
  }
  const [statusLine, ...lines] = data.subarray(0, headEnd).toString("latin1").split(crlf)
  const status = Number(statusLine!.split(" ")[1])
  if (status >= 100 && status < 200) {
    const rest = parseAnswer(data.subarray(headEnd + 4), method, read, ended, problem)
    return rest && { wire: rest.wire, end: headEnd + 4 + rest.end }
  }
  const headers = lines.map((line) => {
    const colon = line.indexOf(":")
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const
  })
  const headerOf = (name: string) => headers.find(([n]) => n === name)?.[1]
  const bodyAt = headEnd + 4
  const rest = data.subarray(bodyAt)
  const chunked = (headerOf("transfer-encoding") ?? "").includes("chunked")
  const length = headerOf("content-length")
  const answer = (body: Buffer | string, framing: Wire["framing"], end: number, trouble = problem) => ({
    wire: { status, headers, body: body.toString(), framing, problem: trouble },
    end: bodyAt + end
  })
  // A HEAD answer has no body: whatever comes after the head until the connection closes is kept, to be compared.
  if (read.kind === "head") return ended ? answer(rest, "none", rest.length) : undefined
  if (method === "HEAD" || status === 204 || status === 304) return answer("", "none", 0)
  if (read.kind === "frames" && (headerOf("content-type") ?? "").startsWith("text/event-stream")) {
    const text = chunked ? dechunk(rest).body.toString("utf8") : rest.toString("utf8")
    const frames = framesUntil(text, read.until, read.count)
    return frames.matched || ended ? answer(frames.text, chunked ? "chunked" : "close", rest.length) : undefined
  }
  if (chunked) {
    const { body, done, end } = dechunk(rest)
    if (done) return answer(body, "chunked", end)
    return ended ? answer(body, "chunked", rest.length, problem ?? "cut") : undefined
  }
  if (length !== undefined) {
    if (rest.length >= Number(length)) return answer(rest.subarray(0, Number(length)), "length", Number(length))
    return ended ? answer(rest, "length", rest.length, problem ?? "cut") : undefined
  }
  return ended ? answer(rest, "close", rest.length) : undefined
}

/** The answers to `methods` in order, as far as `data` holds them. */
const parseAnswers = (data: Buffer, methods: ReadonlyArray<string>, read: Read, ended: boolean, problem: string | undefined): Wire | undefined => {
  const first = parseAnswer(data, methods[0]!, read, ended, problem)
  if (first === undefined || methods.length === 1) return first?.wire
  const rest = data.subarray(first.end)
  if (first.wire.status === undefined) return first.wire
  const next = rest.length === 0 && ended
    ? { status: undefined, headers: [], body: "", framing: "close" as const, problem: problem ?? "closed before an answer" }
    : parseAnswers(rest, methods.slice(1), read, ended, problem)
  return next === undefined ? undefined : { ...first.wire, next }
}

/** Sends a call on a connection of its own and closes it once the server answered (or after a few seconds); the answer is dropped. */
const sendAside = (port: number, call: Call) => {
  const socket = Net.connect(port, "127.0.0.1")
  const timer = setTimeout(() => socket.destroy(), 5_000)
  socket.on("data", () => undefined)
  socket.on("close", () => clearTimeout(timer))
  socket.on("error", () => undefined)
  socket.end(encode(call, port))
}

/** Sends a call (and those after it on its connection) and reads the answers as `read` says; never fails. */
const exchange = (port: number, call: Call, read: Read, timeoutMs = 5_000) =>
  Effect.async<Wire>((resume) => {
    const socket = Net.connect(port, "127.0.0.1")
    const methods = methodsOf(call)
    const limit = read.kind === "frames" ? read.ms : timeoutMs
    let data = Buffer.alloc(0)
    let done = false
    let quiet: ReturnType<typeof setTimeout> | undefined
    let timer: ReturnType<typeof setTimeout> | undefined
    let headSeen = false
    const look = (ended: boolean, problem?: string) => {
      if (done) return
      const wire = parseAnswers(data, methods, read, ended, problem)
      if (wire === undefined) return
      done = true
      clearTimeout(timer)
      clearTimeout(quiet)
      socket.destroy()
      resume(Effect.succeed(wire))
    }
    timer = setTimeout(() => look(true, read.kind === "frames" ? undefined : `no complete answer within ${limit} ms`), limit)
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk])
      if (!headSeen && data.includes(`${crlf}${crlf}`)) {
        headSeen = true
        if (call.during !== undefined) sendAside(port, call.during)
        // After the head of a HEAD answer, what else comes within a moment is kept (a server may keep the connection open).
        if (read.kind === "head") quiet = setTimeout(() => look(true), 250)
      }
      look(false)
    })
    socket.on("end", () => look(true))
    socket.on("close", () => look(true))
    socket.on("error", (error) => look(true, (error as NodeJS.ErrnoException).code ?? error.message))
    socket.write(encode(call, port))
    return Effect.sync(() => socket.destroy())
  })

// ---------------------------------------------------------------------------
// The normaliser

/**
 * Headers left out of the comparison: the date, those of the connection
 * (Node's, not the API's), and the request id. Content-Length and Transfer-Encoding show in the
 * view as its `framing`; a length itself is the body's, compared with it.
 */
const ignoredHeaders = new Set([
  "date",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  // Made per request by the compiled app's request log (RequestLog.test.ts checks it); the platform's path has none.
  "x-request-id"
])

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
const isoTime = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g

/**
 * What differs between two servers by nature, replaced in everything one
 * server answers:
 * - its port, in links (`127.0.0.1:<port>`);
 * - generated ids (UUIDs: records, messages, keys) by the order in which
 *   this server first answered them (`<id:3>`), so that the same id must
 *   come back in the same places on both;
 * - timestamps of the moment (`<time>`);
 * - values made at random that the test learned from an answer (session
 *   cookies, CSRF values, device and user codes, issued tokens), by kind and
 *   order (`<csrf:1>`);
 * - ETags, which digest such values, by order (`<etag:1>`).
 * Nothing else is touched: bodies are compared whole.
 */
class Normaliser {
  private readonly ordinals = new Map<string, string>()
  private readonly counts = new Map<string, number>()
  /** Random values and their placeholders, longest first (so that no value is replaced inside a longer one). */
  private secrets: Array<readonly [string, string]> = []

  constructor(private readonly port: number) {}

  /** The placeholder of a value of a kind, numbered in the order of first sight. */
  ordinal(kind: string, value: string): string {
    const key = `${kind}\u0000${value}`
    let found = this.ordinals.get(key)
    if (found === undefined) {
      const n = (this.counts.get(kind) ?? 0) + 1
      this.counts.set(kind, n)
      found = `<${kind}:${n}>`
      this.ordinals.set(key, found)
    }
    return found
  }

  /** A value made at random that this server answered, replaced from now on. */
  secret(kind: string, value: string | undefined): void {
    if (value === undefined || value === "" || this.secrets.some(([known]) => known === value)) return
    this.secrets = [...this.secrets, [value, this.ordinal(kind, value)] as const].sort(([a], [b]) => b.length - a.length)
  }

  text(text: string): string {
    let out = text
    for (const [value, placeholder] of this.secrets) out = out.replaceAll(value, placeholder)
    out = out.replaceAll(`127.0.0.1:${this.port}`, "127.0.0.1:<port>").replaceAll(`localhost:${this.port}`, "localhost:<port>")
    out = out.replace(uuid, (id) => this.ordinal("id", id.toLowerCase()))
    return out.replace(isoTime, "<time>")
  }
}

/** An answer as compared: normalised, headers sorted, each Set-Cookie as its name, whether it has a value, and its attributes. */
interface View {
  readonly status: number | "no answer"
  readonly problem: string | undefined
  readonly framing: Wire["framing"]
  readonly headers: Readonly<Record<string, string>>
  readonly cookies: ReadonlyArray<string>
  readonly body: string
  /** The answer to the next request on the same connection. */
  readonly next?: View | undefined
}

const viewOf = (side: Side, wire: Wire): View => {
  const n = side.normaliser
  const headers: Record<string, string> = {}
  const cookies: Array<string> = []
  for (const [name, value] of wire.headers) {
    if (ignoredHeaders.has(name)) continue
    if (name === "set-cookie") {
      const [pair = "", ...attributes] = value.split(";").map((part) => part.trim())
      const eq = pair.indexOf("=")
      const cookieValue = pair.slice(eq + 1)
      cookies.push([`${pair.slice(0, eq)}=${cookieValue === "" ? "" : "<value>"}`, ...attributes.map((a) => n.text(a))].join("; "))
      continue
    }
    const normalised = name === "etag" ? value.replace(/"[^"]*"/, (tag) => `"${n.ordinal("etag", tag)}"`) : n.text(value)
    headers[name] = headers[name] === undefined ? normalised : `${headers[name]}, ${normalised}`
  }
  const sorted = Object.fromEntries(Object.entries(headers).sort(([a], [b]) => a.localeCompare(b)))
  return {
    status: wire.status ?? "no answer",
    problem: wire.problem,
    framing: wire.framing,
    headers: sorted,
    cookies: cookies.sort(),
    body: n.text(wire.body),
    ...(wire.next === undefined ? {} : { next: viewOf(side, wire.next) })
  }
}

// ---------------------------------------------------------------------------
// Steps: requests sent to both servers, and what each server's own setup needs

/**
 * What a call is for: `unauthenticated`, without a credential or with one
 * refused (on a public route, its valid call); `valid`, valid input with a
 * credential (the role may still be refused); `bad`, a bad path parameter,
 * query, header or body; `server`, what is the server's rather than a route's.
 */
type Kind = "unauthenticated" | "valid" | "bad" | "server"

interface Exchange {
  readonly label: string
  readonly kind: Kind
  readonly call: (state: Record<string, string>) => Call
  readonly read?: Read
  /** Keeps values of this server's answer for later requests (and tells the normaliser which are random). */
  readonly keep?: (wire: Wire, side: Side) => void
}

/** Work on each server that is not compared: waiting for a reply to finish, reading the fake cluster. */
interface Setup {
  readonly label: string
  readonly kind: "setup"
  readonly run: (side: Side) => Effect.Effect<void>
}

type Step = Exchange | Setup

interface RouteCase {
  readonly steps: ReadonlyArray<Step>
  /** Why the endpoint has no bad-input call: it takes no input. */
  readonly noInput?: string
}

const v1 = (path: string) => `/api/v1${path}`
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const owner = bearer(tokenOf("owner"))
const jsonType = { "content-type": "application/json" }
/** The Accept an MCP client sends: JSON or an event stream. */
const mcpAccept = (headers: Record<string, string>) => ({ ...headers, accept: "application/json, text/event-stream" })
const mcpCall = (id: number, method: string, params?: unknown) => ({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) })
const mcpInitialize = { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "parity", version: "1.0.0" } }
const formType = { "content-type": "application/x-www-form-urlencoded" }

const get = (path: string, headers: Record<string, string> = {}): Call => ({ method: "GET", path: v1(path), headers })
const bare = (method: string, path: string, headers: Record<string, string> = {}): Call => ({ method, path: v1(path), headers })
const withJson = (method: string, path: string, body: unknown, headers: Record<string, string> = owner): Call => ({
  method,
  path: v1(path),
  headers: { ...headers, ...jsonType },
  body: typeof body === "string" ? body : JSON.stringify(body)
})
const withForm = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Call => ({
  method: "POST",
  path: v1(path),
  headers: { ...headers, ...formType },
  body: new URLSearchParams(fields).toString()
})

const step = (kind: Kind, label: string, call: Exchange["call"], more: Omit<Exchange, "kind" | "label" | "call"> = {}): Exchange => ({
  kind,
  label,
  call,
  ...more
})
const setup = (label: string, run: Setup["run"]): Setup => ({ kind: "setup", label, run })

/** A JSON field of an answer. */
const field = (wire: Wire, name: string): string | undefined => {
  try {
    const value = (JSON.parse(wire.body) as Record<string, unknown>)[name]
    return typeof value === "string" ? value : undefined
  } catch {
    return undefined
  }
}

const agent = `/agents/${account}/helper`
const conversation = "6f1c2a7e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
const conversationPath = (s: Record<string, string>) => `/deployments/${s["deployment"]}/messaging/conversations/${conversation}`
const registration = (build_id: string) => ({
  build_id,
  registry: "ghcr.io/acme",
  spec_content: "name: helper\ndescription: Helps people\nport: 8080\nenv:\n  MODE: fast\n",
  readme: "# Helper"
})
const traceExport = otlpExport(account, "helper")

/** Polls a server's history until the conversation's latest reply is no longer streaming (not compared: how often differs). */
const settled = setup("reply finished", (side) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const wire = yield* exchange(side.port, get(`${conversationPath(side.state)}/messages`, owner), { kind: "whole" })
      const messages = (JSON.parse(wire.body) as { messages?: Array<{ role: string; status: string }> }).messages ?? []
      const last = messages.at(-1)
      if (last?.role === "assistant" && last.status !== "streaming") return
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.dieMessage(`${side.name}: the reply did not finish`)
  }))

/** Keeps a device login's codes (as the login the later steps use, when `use`); both are random. */
const keepCodes = (use: boolean) => (wire: Wire, side: Side) => {
  const deviceCode = field(wire, "device_code")
  const userCode = field(wire, "user_code")
  side.normaliser.secret("device-code", deviceCode)
  side.normaliser.secret("user-code", userCode)
  if (use) {
    side.state["deviceCode"] = deviceCode ?? ""
    side.state["userCode"] = userCode ?? ""
  }
}

const cookieOf = (wire: Wire) => wire.headers.find(([n]) => n === "set-cookie")?.[1].split(";")[0]

/**
 * One case per endpoint, in the order they run: what a case makes (an
 * agent, a deployment, a conversation, a file, a session) is there for the
 * cases after it. Undeploying comes last.
 */
const routeCases: Record<string, RouteCase> = {
  "accounts.me": {
    steps: [
      step("unauthenticated", "me without a credential", () => get("/me")),
      step("unauthenticated", "me with a token nobody was given", () => get("/me", bearer(badToken))),
      step("unauthenticated", "me with an expired token", () => get("/me", bearer(expiredToken))),
      step("unauthenticated", "me with a malformed Authorization header", () => get("/me", { authorization: "Basic abc" })),
      step("valid", "me", () => get("/me", owner))
    ],
    noInput: "GET /me takes no parameters, query or body"
  },
  "accounts.get": {
    steps: [
      step("unauthenticated", "account without a credential", () => get(`/accounts/${account}`)),
      step("valid", "account", () => get(`/accounts/${account}`, owner)),
      step("valid", "account of an outsider", () => get(`/accounts/${account}`, bearer(tokenOf("outsider")))),
      step("bad", "account with an invalid name", () => get("/accounts/Not_An%20Account", owner)),
      step("bad", "account that does not exist", () => get("/accounts/parity-nobody", owner))
    ]
  },
  "accounts.create": {
    steps: [
      step("unauthenticated", "create an account without a credential", () => withJson("POST", "/accounts", { name: "parity-created" }, {})),
      step("bad", "create an account with a schema error", () => withJson("POST", "/accounts", { name: 5 })),
      step("bad", "create an account with an invalid name", () => withJson("POST", "/accounts", { name: "No Spaces" })),
      step("valid", "create an account", () => withJson("POST", "/accounts", { name: "parity-created" })),
      step("valid", "create an account whose name is taken", () => withJson("POST", "/accounts", { name: "parity-created" }))
    ]
  },
  "accounts.members": {
    steps: [
      step("unauthenticated", "members without a credential", () => get(`/accounts/${account}/members`)),
      step("valid", "members", () => get(`/accounts/${account}/members`, owner)),
      step("valid", "members as an outsider", () => get(`/accounts/${account}/members`, bearer(tokenOf("outsider")))),
      step("bad", "members of an invalid name", () => get("/accounts/Not_An%20Account/members", owner)),
      step("bad", "members of an account that does not exist", () => get("/accounts/parity-nobody/members", owner))
    ]
  },
  // The outsider is added here and removed by the next case: the later cases find the team as it was.
  "accounts.setMember": {
    steps: [
      step("unauthenticated", "set a role without a credential", () =>
        withJson("PUT", `/accounts/${account}/members/${userId("outsider")}`, { role: "member" }, {})),
      step("bad", "set an unknown role", () => withJson("PUT", `/accounts/${account}/members/${userId("outsider")}`, { role: "king" })),
      step("bad", "set a role of an invalid user id", () => withJson("PUT", `/accounts/${account}/members/no%20spaces`, { role: "member" })),
      step("valid", "add the outsider as a member", () =>
        withJson("PUT", `/accounts/${account}/members/${userId("outsider")}`, { role: "member" })),
      step("valid", "a member sets a role (forbidden)", () =>
        withJson("PUT", `/accounts/${account}/members/${userId("outsider")}`, { role: "member" }, bearer(tokenOf("member")))),
      step("valid", "set a role of an unknown user", () => withJson("PUT", `/accounts/${account}/members/parity-nobody`, { role: "member" })),
      step("valid", "demote the last owner", () => withJson("PUT", `/accounts/${account}/members/${userId("owner")}`, { role: "admin" }))
    ]
  },
  "accounts.removeMember": {
    steps: [
      step("unauthenticated", "remove a member without a credential", () =>
        bare("DELETE", `/accounts/${account}/members/${userId("outsider")}`)),
      step("bad", "remove an invalid user id", () => bare("DELETE", `/accounts/${account}/members/no%20spaces`, owner)),
      step("valid", "remove the outsider", () => bare("DELETE", `/accounts/${account}/members/${userId("outsider")}`, owner)),
      step("valid", "remove the outsider again", () => bare("DELETE", `/accounts/${account}/members/${userId("outsider")}`, owner)),
      step("valid", "the last owner leaves", () => bare("DELETE", `/accounts/${account}/members/${userId("owner")}`, owner))
    ]
  },
  "agents.register": {
    steps: [
      step("unauthenticated", "register without a credential", () => withJson("POST", `${agent}/register`, registration("b-1"), {})),
      step("valid", "register b-1", () => withJson("POST", `${agent}/register`, registration("b-1"))),
      step("valid", "register b-1 as a member (forbidden)", () => withJson("POST", `${agent}/register`, registration("b-1"), bearer(tokenOf("member")))),
      step("bad", "register with invalid JSON", () => withJson("POST", `${agent}/register`, "{\"build_id\": ")),
      step("bad", "register with a schema error", () => withJson("POST", `${agent}/register`, { build_id: 5 })),
      step("bad", "register with an invalid agent name", () => withJson("POST", `/agents/${account}/Bad.Name/register`, registration("b-1"))),
      step("bad", "register without a content type", () => ({ ...withJson("POST", `${agent}/register`, registration("b-1")), headers: owner })),
      step("bad", "register with an empty body", () => withJson("POST", `${agent}/register`, ""))
    ]
  },
  "agents.publish": {
    steps: [
      step("unauthenticated", "publish without a credential", () => withJson("POST", `${agent}/publish`, { build_id: "b-1", version: "1.0.0" }, {})),
      step("valid", "publish b-1 as 1.0.0", () => withJson("POST", `${agent}/publish`, { build_id: "b-1", version: "1.0.0" })),
      step("valid", "publish 1.0.0 again (conflict)", () => withJson("POST", `${agent}/publish`, { build_id: "b-1", version: "1.0.0" })),
      step("bad", "publish with a version that is not semantic", () => withJson("POST", `${agent}/publish`, { build_id: "b-1", version: "one" })),
      step("bad", "publish with invalid JSON", () => withJson("POST", `${agent}/publish`, "[1,"))
    ]
  },
  "publicAgents.channels": {
    steps: [
      step("unauthenticated", "channels without a credential", () => get(`${agent}/channels`)),
      step("unauthenticated", "channels with a token nobody was given", () => get(`${agent}/channels`, bearer(badToken))),
      step("bad", "channels of an invalid agent name", () => get(`/agents/${account}/No_Such/channels`)),
      step("valid", "channels as the owner", () => get(`${agent}/channels`, owner))
    ]
  },
  "agents.setChannel": {
    steps: [
      step("unauthenticated", "set a channel without a credential", () => withJson("PUT", `${agent}/channels/stable`, { version: "1.0.0" }, {})),
      step("bad", "set a channel with an invalid name", () => withJson("PUT", `${agent}/channels/Stable!`, { version: "1.0.0" })),
      step("bad", "set a channel to a range", () => withJson("PUT", `${agent}/channels/stable`, { version: "^1" })),
      step("valid", "set latest", () => withJson("PUT", `${agent}/channels/latest`, { version: "1.0.0" })),
      step("valid", "set a channel to an unpublished version", () => withJson("PUT", `${agent}/channels/stable`, { version: "9.0.0" })),
      step("valid", "set stable to 1.0.0", () => withJson("PUT", `${agent}/channels/stable`, { version: "1.0.0" }))
    ]
  },
  "agents.removeChannel": {
    steps: [
      step("unauthenticated", "remove a channel without a credential", () => bare("DELETE", `${agent}/channels/stable`)),
      step("bad", "remove a channel with an invalid name", () => bare("DELETE", `${agent}/channels/-x`, owner)),
      step("valid", "remove stable", () => bare("DELETE", `${agent}/channels/stable`, owner)),
      step("valid", "remove stable again", () => bare("DELETE", `${agent}/channels/stable`, owner))
    ]
  },
  "agents.yank": {
    steps: [
      step("unauthenticated", "yank without a credential", () => withJson("POST", `${agent}/versions/1.0.0/yank`, { reason: "broken" }, {})),
      step("bad", "yank without a reason", () => withJson("POST", `${agent}/versions/1.0.0/yank`, {})),
      step("bad", "yank a version that is not semantic", () => withJson("POST", `${agent}/versions/one/yank`, { reason: "broken" })),
      step("valid", "yank a version never published", () => withJson("POST", `${agent}/versions/9.0.0/yank`, { reason: "broken" })),
      step("valid", "yank 1.0.0", () => withJson("POST", `${agent}/versions/1.0.0/yank`, { reason: "broken" })),
      step("valid", "set a channel to the yanked version", () => withJson("PUT", `${agent}/channels/stable`, { version: "1.0.0" }))
    ]
  },
  "agents.unyank": {
    steps: [
      step("unauthenticated", "undo a yank without a credential", () => bare("DELETE", `${agent}/versions/1.0.0/yank`)),
      step("bad", "undo a yank of a version that is not semantic", () => bare("DELETE", `${agent}/versions/1.0/yank`, owner)),
      step("valid", "undo the yank of 1.0.0", () => bare("DELETE", `${agent}/versions/1.0.0/yank`, owner))
    ]
  },
  "publicAgents.list": {
    steps: [
      step("unauthenticated", "catalog without a credential", () => get(`/agents?q=${account}`)),
      step("unauthenticated", "catalog with a token nobody was given", () => get(`/agents?q=${account}`, bearer(badToken))),
      step("valid", "catalog", () => get(`/agents?q=${account}&limit=10`, owner)),
      step("bad", "catalog with a limit that is not a number", () => get("/agents?limit=many")),
      step("bad", "catalog with a limit out of range", () => get("/agents?limit=0"))
    ]
  },
  "publicAgents.get": {
    steps: [
      step("unauthenticated", "public agent without a credential", () => get(agent), {
        keep: (wire, side) => void (side.state["agentEtag"] = wire.headers.find(([n]) => n === "etag")?.[1] ?? "")
      }),
      step("unauthenticated", "public agent with a token nobody was given", () => get(agent, bearer(badToken))),
      step("valid", "public agent", () => get(agent, owner)),
      step("valid", "public agent, unchanged since its ETag", (s) => get(agent, { "if-none-match": s["agentEtag"] ?? "" })),
      step("bad", "public agent with an invalid account", () => get("/agents/-bad-/helper")),
      step("bad", "public agent that does not exist", () => get(`/agents/${account}/nobody`))
    ]
  },
  "agents.config": {
    steps: [
      step("unauthenticated", "config without a credential", () => get(`${agent}/config`)),
      step("valid", "config", () => get(`${agent}/config`, owner)),
      step("valid", "config for a non-member", () => get(`${agent}/config`, bearer(tokenOf("outsider")))),
      step("bad", "config with an invalid agent name", () => get(`/agents/${account}/UPPER/config`, owner))
    ]
  },
  "deployments.deploy": {
    steps: [
      step("unauthenticated", "deploy without a credential", () => withJson("POST", `${agent}/deployments`, {}, {})),
      step("valid", "deploy", () => withJson("POST", `${agent}/deployments`, {}), {
        keep: (wire, side) => {
          side.state["deployment"] = field(wire, "id") ?? "none"
          side.state["namespace"] = field(wire, "namespace") ?? "none"
        }
      }),
      setup("the deployment's pod", (side) =>
        Effect.gen(function*() {
          const cluster = Context.get(side.context, Cluster.Cluster)
          const pods = yield* Effect.orDie(cluster.listPods(side.state["namespace"]!))
          side.state["pod"] = pods[0]?.name ?? "none"
          side.normaliser.secret("pod", side.state["pod"])
        })),
      step("bad", "deploy with invalid JSON", () => withJson("POST", `${agent}/deployments`, "{")),
      step("bad", "deploy with a schema error", () => withJson("POST", `${agent}/deployments`, { version: 7 }))
    ]
  },
  "deployments.get": {
    steps: [
      step("unauthenticated", "deployment without a credential", (s) => get(`/deployments/${s["deployment"]}`)),
      step("valid", "deployment", (s) => get(`/deployments/${s["deployment"]}`, owner)),
      step("bad", "deployment with an invalid id", () => get("/deployments/-nope", owner)),
      step("bad", "deployment that does not exist", () => get("/deployments/dep-nothing", owner))
    ]
  },
  "deployments.history": {
    steps: [
      step("unauthenticated", "deployment history without a credential", () => get(`${agent}/deployment/history`)),
      step("valid", "deployment history", () => get(`${agent}/deployment/history`, owner)),
      step("bad", "deployment history with an invalid account", () => get("/agents/A!/helper/deployment/history", owner))
    ]
  },
  "deployments.configMap": {
    steps: [
      step("unauthenticated", "config map without a credential", (s) => get(`/deployments/${s["namespace"]}/configmap/helper-config?account=${account}`)),
      step("valid", "config map", (s) => get(`/deployments/${s["namespace"]}/configmap/helper-config?account=${account}`, owner)),
      step("bad", "config map without the account", (s) => get(`/deployments/${s["namespace"]}/configmap/helper-config`, owner)),
      step("bad", "config map with an invalid namespace", () => get(`/deployments/NS_BAD/configmap/helper-config?account=${account}`, owner))
    ]
  },
  "deployments.restartPod": {
    steps: [
      step("unauthenticated", "restart without a credential", (s) => bare("POST", `/deployments/${s["namespace"]}/pods/${s["pod"]}/restart?account=${account}`)),
      step("valid", "restart", (s) => bare("POST", `/deployments/${s["namespace"]}/pods/${s["pod"]}/restart?account=${account}`, owner)),
      step("bad", "restart without the account", (s) => bare("POST", `/deployments/${s["namespace"]}/pods/${s["pod"]}/restart`, owner)),
      step("bad", "restart a pod that does not exist", (s) => bare("POST", `/deployments/${s["namespace"]}/pods/nothing/restart?account=${account}`, owner))
    ]
  },
  "chat.send": {
    steps: [
      step("unauthenticated", "send without a credential", (s) => withJson("POST", `${conversationPath(s)}/messages`, { content: "hello agent" }, {})),
      step("valid", "send the first message", (s) => withJson("POST", `${conversationPath(s)}/messages`, { content: "hello agent" })),
      settled,
      step("bad", "send with a schema error", (s) => withJson("POST", `${conversationPath(s)}/messages`, { content: 5 })),
      step("bad", "send with invalid JSON", (s) => withJson("POST", `${conversationPath(s)}/messages`, "{\"content\"")),
      step("bad", "send with an unknown concurrent_send", (s) => withJson("POST", `${conversationPath(s)}/messages`, { content: "x", concurrent_send: "later" })),
      step("bad", "send to a conversation id that is not a UUID v4", (s) => withJson("POST", `/deployments/${s["deployment"]}/messaging/conversations/nope/messages`, { content: "x" }))
    ]
  },
  "chat.history": {
    steps: [
      step("unauthenticated", "history without a credential", (s) => get(`${conversationPath(s)}/messages`)),
      step("valid", "history", (s) => get(`${conversationPath(s)}/messages`, owner)),
      step("valid", "history of another member's conversation", (s) => get(`${conversationPath(s)}/messages`, bearer(tokenOf("other")))),
      step("bad", "history of an invalid conversation id", (s) => get(`/deployments/${s["deployment"]}/messaging/conversations/x/messages`, owner))
    ]
  },
  "chat.stream": {
    steps: [
      step("unauthenticated", "reply stream without a credential", (s) => get(`${conversationPath(s)}/stream`)),
      step("valid", "reply stream, to the completed reply", (s) => get(`${conversationPath(s)}/stream`, owner), {
        read: { kind: "frames", until: /^event: message\.completed$/m, ms: 2_000 },
        keep: (wire, side) => void (side.state["lastReplyEvent"] = /^id: (.*)$/m.exec(wire.body)?.[1] ?? "")
      }),
      step("valid", "reply stream, live: a one-word message sent while it is open", (s) => ({
        ...get(`${conversationPath(s)}/stream`, owner),
        during: withJson("POST", `${conversationPath(s)}/messages`, { content: "again" })
      }), { read: { kind: "frames", until: /^event: message\.completed$/m, count: 2, ms: 3_000 } }),
      settled,
      step("bad", "reply stream with a Last-Event-ID too long", (s) => get(`${conversationPath(s)}/stream`, { ...owner, "last-event-id": "x".repeat(100) })),
      step("bad", "reply stream of an invalid conversation id", (s) => get(`/deployments/${s["deployment"]}/messaging/conversations/z/stream`, owner))
    ]
  },
  "chat.list": {
    steps: [
      step("unauthenticated", "conversations without a credential", (s) => get(`/deployments/${s["deployment"]}/chat/conversations`)),
      step("valid", "conversations", (s) => get(`/deployments/${s["deployment"]}/chat/conversations`, owner)),
      step("bad", "conversations of an invalid deployment id", () => get("/deployments/%20/chat/conversations", owner))
    ]
  },
  "chat.setTitle": {
    steps: [
      step("unauthenticated", "title without a credential", (s) => withJson("PUT", `/deployments/${s["deployment"]}/chat/conversations/${conversation}/title`, { title: "T" }, {})),
      step("valid", "title", (s) => withJson("PUT", `/deployments/${s["deployment"]}/chat/conversations/${conversation}/title`, { title: "Renamed" })),
      step("bad", "title with a schema error", (s) => withJson("PUT", `/deployments/${s["deployment"]}/chat/conversations/${conversation}/title`, { title: ["x"] }))
    ]
  },
  "chat.cancel": {
    steps: [
      step("unauthenticated", "cancel without a credential", (s) => bare("POST", `${conversationPath(s)}/cancel`)),
      step("valid", "cancel", (s) => bare("POST", `${conversationPath(s)}/cancel`, owner)),
      step("bad", "cancel an invalid conversation id", (s) => bare("POST", `/deployments/${s["deployment"]}/messaging/conversations/1/cancel`, owner))
    ]
  },
  "accounts.events": {
    steps: [
      step("unauthenticated", "events without a credential", () => get(`/accounts/${account}/events`)),
      step("valid", "events, to ready", () => get(`/accounts/${account}/events`, owner), {
        read: { kind: "frames", until: /^event: ready$/m, ms: 2_000 }
      }),
      step("valid", "events replayed from the start", () => get(`/accounts/${account}/events?last_event_id=0`, owner), {
        // Ready, then the replay: the builds registered and published, the deployment.
        read: { kind: "frames", until: /^event: deployment\.changed$/m, ms: 2_000 }
      }),
      step("valid", "events, live: a build registered while the stream is open", () => ({
        ...get(`/accounts/${account}/events`, owner),
        during: withJson("POST", `${agent}/register`, registration("b-live"))
      }), { read: { kind: "frames", until: /^event: agent\.build$/m, ms: 2_000 } }),
      step("valid", "events resumed from a Last-Event-ID", () => get(`/accounts/${account}/events`, { ...owner, "last-event-id": "2" }), {
        // Ready, then what came after event 2, to the live one of the step before.
        read: { kind: "frames", until: /^data: .*"b-live"/m, ms: 2_000 }
      }),
      step("valid", "events from an id this log never issued (resync)", () => get(`/accounts/${account}/events`, { ...owner, "last-event-id": "99999" }), {
        read: { kind: "frames", until: /^event: ready$/m, ms: 2_000 }
      }),
      step("valid", "events of an outsider", () => get(`/accounts/${account}/events`, bearer(tokenOf("outsider")))),
      step("bad", "events with a last_event_id too long", () => get(`/accounts/${account}/events?last_event_id=${"9".repeat(80)}`, owner)),
      step("bad", "events of an invalid account", () => get("/accounts/%E2%98%83/events", owner))
    ]
  },
  "files.reserve": {
    steps: [
      step("unauthenticated", "reserve without a credential", (s) => withJson("POST", `/deployments/${s["deployment"]}/files`, { filename: "notes.txt", content_type: "text/plain", size: 5 }, {})),
      step("valid", "reserve", (s) => withJson("POST", `/deployments/${s["deployment"]}/files`, { filename: "notes.txt", content_type: "text/plain", size: 5 }), {
        keep: (wire, side) => void (side.state["file"] = field(wire, "key") ?? "none")
      }),
      step("bad", "reserve with a negative size", (s) => withJson("POST", `/deployments/${s["deployment"]}/files`, { filename: "a", content_type: "text/plain", size: -1 })),
      step("bad", "reserve with invalid JSON", (s) => withJson("POST", `/deployments/${s["deployment"]}/files`, "nope"))
    ]
  },
  "files.upload": {
    steps: [
      step("unauthenticated", "upload without a credential", (s) => ({
        method: "PUT",
        path: v1(`/deployments/${s["deployment"]}/files/${s["file"]}/content`),
        headers: { "content-type": "application/octet-stream" },
        body: "hello"
      })),
      step("bad", "upload more than reserved", (s) => ({
        method: "PUT",
        path: v1(`/deployments/${s["deployment"]}/files/${s["file"]}/content`),
        headers: { ...owner, "content-type": "application/octet-stream" },
        body: "hello, and more"
      })),
      step("valid", "upload", (s) => ({
        method: "PUT",
        path: v1(`/deployments/${s["deployment"]}/files/${s["file"]}/content`),
        headers: { ...owner, "content-type": "application/octet-stream" },
        body: "hello"
      })),
      step("bad", "upload to a key that does not exist", (s) => ({
        method: "PUT",
        path: v1(`/deployments/${s["deployment"]}/files/nothing/content`),
        headers: { ...owner, "content-type": "application/octet-stream" },
        body: "hello"
      }))
    ]
  },
  "files.complete": {
    steps: [
      step("unauthenticated", "complete without a credential", (s) => bare("POST", `/deployments/${s["deployment"]}/files/${s["file"]}/complete`)),
      step("valid", "complete", (s) => bare("POST", `/deployments/${s["deployment"]}/files/${s["file"]}/complete`, owner)),
      step("bad", "complete a key that does not exist", (s) => bare("POST", `/deployments/${s["deployment"]}/files/nothing/complete`, owner))
    ]
  },
  "files.list": {
    steps: [
      step("unauthenticated", "files without a credential", (s) => get(`/deployments/${s["deployment"]}/files`)),
      step("valid", "files", (s) => get(`/deployments/${s["deployment"]}/files`, owner)),
      step("bad", "files of an invalid deployment id", () => get("/deployments/.hidden/files", owner))
    ]
  },
  "files.download": {
    steps: [
      step("unauthenticated", "download without a credential", (s) => get(`/deployments/${s["deployment"]}/files/${s["file"]}/content`)),
      step("valid", "download", (s) => get(`/deployments/${s["deployment"]}/files/${s["file"]}/content`, owner)),
      step("valid", "download a range", (s) => get(`/deployments/${s["deployment"]}/files/${s["file"]}/content`, { ...owner, range: "bytes=1-3" })),
      step("bad", "download an unsatisfiable range", (s) => get(`/deployments/${s["deployment"]}/files/${s["file"]}/content`, { ...owner, range: "bytes=9-" })),
      step("bad", "download a key that does not exist", (s) => get(`/deployments/${s["deployment"]}/files/nothing/content`, owner))
    ]
  },
  "traces.ingest": {
    steps: [
      step("unauthenticated", "trace export without a credential", () => withJson("POST", "/otlp/v1/traces", traceExport, {})),
      step("valid", "trace export", () => withJson("POST", "/otlp/v1/traces", traceExport)),
      step("bad", "trace export as protobuf", () => ({ ...withJson("POST", "/otlp/v1/traces", "\u0000\u0001"), headers: { ...owner, "content-type": "application/x-protobuf" } })),
      step("bad", "trace export with invalid JSON", () => withJson("POST", "/otlp/v1/traces", "{\"resourceSpans\": [")),
      step("bad", "trace export with a schema error", () => withJson("POST", "/otlp/v1/traces", { resourceSpans: "none" }))
    ]
  },
  "traces.list": {
    steps: [
      step("unauthenticated", "traces without a credential", () => get(`${agent}/observability/traces`)),
      step("valid", "traces", () => get(`${agent}/observability/traces`, owner)),
      step("bad", "traces with a limit that is not digits", () => get(`${agent}/observability/traces?limit=1e3`, owner)),
      step("bad", "traces with a start time that is not RFC 3339", () => get(`${agent}/observability/traces?start_time=yesterday`, owner))
    ]
  },
  "traces.get": {
    steps: [
      step("unauthenticated", "a trace without a credential", () => get(`${agent}/observability/traces/${otlpTraceId}`)),
      step("valid", "a trace with its spans", () => get(`${agent}/observability/traces/${otlpTraceId}`, owner)),
      step("valid", "a trace that does not exist", () => get(`${agent}/observability/traces/0123456789abcdef0123456789abcdef`, owner)),
      step("bad", "a trace id that is not one", () => get(`${agent}/observability/traces/not%20an%20id`, owner))
    ]
  },
  "session.signIn": {
    steps: [
      step("unauthenticated", "sign in without a token", () => withJson("POST", "/session", {}, {})),
      step("unauthenticated", "sign in with a token nobody was given", () => withJson("POST", "/session", { token: badToken }, {})),
      step("valid", "sign in", () => withJson("POST", "/session", { token: tokenOf("owner") }, {}), {
        keep: (wire, side) => {
          side.state["cookie"] = cookieOf(wire) ?? ""
          side.state["csrf"] = field(wire, "csrf") ?? ""
          side.normaliser.secret("session", side.state["cookie"].split("=").slice(1).join("="))
          side.normaliser.secret("csrf", side.state["csrf"])
        }
      }),
      step("bad", "sign in with invalid JSON", () => withJson("POST", "/session", "{token}", {}))
    ]
  },
  "session.current": {
    steps: [
      step("unauthenticated", "session without a cookie", () => get("/session")),
      step("valid", "session", (s) => get("/session", { cookie: s["cookie"]! }))
    ],
    noInput: "GET /session reads only the session cookie"
  },
  "oauth.metadata": {
    steps: [step("unauthenticated", "authorization server metadata", () => get("/.well-known/oauth-authorization-server"))],
    noInput: "the metadata document takes no input"
  },
  "wellKnown.metadata": {
    steps: [step("unauthenticated", "authorization server metadata at the root", () => ({ method: "GET", path: "/.well-known/oauth-authorization-server/api/v1" }))],
    noInput: "the metadata document takes no input"
  },
  "oauth.deviceCode": {
    steps: [
      step("unauthenticated", "device code", () => withForm("/oauth/device/code", { client_id: "parity" }), { keep: keepCodes(true) }),
      step("bad", "device code without a client id", () => withForm("/oauth/device/code", {})),
      step("unauthenticated", "device code asked for in JSON", () => withJson("POST", "/oauth/device/code", { client_id: "parity" }, {}), {
        keep: keepCodes(false)
      })
    ]
  },
  "oauth.devicePage": {
    steps: [
      step("unauthenticated", "device page without a session", () => get("/device")),
      step("valid", "device page with a session and a code", (s) => get(`/device?user_code=${s["userCode"]}`, { cookie: s["cookie"]! })),
      step("bad", "device page with a code too long", () => get(`/device?user_code=${"A".repeat(40)}`))
    ]
  },
  "oauth.deviceSession": {
    steps: [
      step("unauthenticated", "device sign-in without a token", () => withForm("/device/session", {})),
      step("valid", "device sign-in", () => withForm("/device/session", { token: tokenOf("owner") }), {
        keep: (wire, side) => {
          const cookie = cookieOf(wire)
          side.normaliser.secret("session", cookie?.split("=").slice(1).join("="))
        }
      }),
      step("bad", "device sign-in as JSON", () => withJson("POST", "/device/session", { token: tokenOf("owner") }, {}))
    ]
  },
  "oauth.deviceDecision": {
    steps: [
      step("unauthenticated", "device decision without a session", (s) => withForm("/device", { user_code: s["userCode"]!, decision: "approve", csrf: "none" })),
      step("valid", "device decision: approve", (s) =>
        withForm("/device", { user_code: s["userCode"]!, decision: "approve", csrf: s["csrf"]! }, { cookie: s["cookie"]! })),
      step("bad", "device decision neither approve nor deny", (s) =>
        withForm("/device", { user_code: s["userCode"]!, decision: "maybe", csrf: s["csrf"]! }, { cookie: s["cookie"]! }))
    ]
  },
  "oauth.token": {
    steps: [
      step("unauthenticated", "token for the approved device", (s) =>
        withForm("/oauth/token", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: s["deviceCode"]!, client_id: "parity" }), {
        keep: (wire, side) => {
          side.state["issued"] = field(wire, "access_token") ?? ""
          side.normaliser.secret("issued-token", side.state["issued"])
        }
      }),
      step("bad", "token with an unknown grant type", () => withForm("/oauth/token", { grant_type: "password" })),
      step("bad", "token without fields", () => withForm("/oauth/token", {}))
    ]
  },
  "oauth.revoke": {
    steps: [
      step("unauthenticated", "revoke the issued token", (s) => withForm("/oauth/revoke", { token: s["issued"]! })),
      step("valid", "me with the revoked token", (s) => get("/me", bearer(s["issued"]!))),
      step("bad", "revoke without a token", () => withForm("/oauth/revoke", {}))
    ]
  },
  "accounts.remove": {
    steps: [
      step("unauthenticated", "delete an account without a credential", () => bare("DELETE", `/accounts/${account}`)),
      step("bad", "delete an account of an invalid name", () => bare("DELETE", "/accounts/Not_An%20Account", owner)),
      step("valid", "delete an account that does not exist", () => bare("DELETE", "/accounts/parity-nobody", owner)),
      step("valid", "delete the team as a member", () => bare("DELETE", `/accounts/${account}`, bearer(tokenOf("member")))),
      step("valid", "make an account to delete", () => withJson("POST", "/accounts", { name: "parity-doomed" })),
      step("valid", "delete it", () => bare("DELETE", "/accounts/parity-doomed", owner)),
      step("valid", "the deleted account", () => get("/accounts/parity-doomed", owner))
    ]
  },
  "accounts.audit": {
    steps: [
      step("unauthenticated", "audit without a credential", () => get(`/accounts/${account}/audit`)),
      step("valid", "audit", () => get(`/accounts/${account}/audit?limit=3`, owner)),
      step("valid", "audit as a member", () => get(`/accounts/${account}/audit`, bearer(tokenOf("member")))),
      step("bad", "audit with a limit too large", () => get(`/accounts/${account}/audit?limit=1000`, owner)),
      step("bad", "audit with an offset that is not a number", () => get(`/accounts/${account}/audit?offset=-1`, owner))
    ]
  },
  "accounts.invite": {
    steps: [
      step("unauthenticated", "invite without a credential", () => withJson("POST", `/accounts/${account}/invitations`, { role: "member" }, {})),
      step("bad", "invite with an unknown role", () => withJson("POST", `/accounts/${account}/invitations`, { role: "king" })),
      step("bad", "invite with an address that is not one", () =>
        withJson("POST", `/accounts/${account}/invitations`, { role: "member", email: "nobody" })),
      step("valid", "invite a member", () => withJson("POST", `/accounts/${account}/invitations`, { role: "member", email: "new@example.com" }), {
        keep: (wire, side) => {
          side.state["invitation"] = field(wire, "id") ?? ""
          side.state["invitationCode"] = field(wire, "code") ?? ""
          side.normaliser.secret("invitation-code", side.state["invitationCode"])
        }
      }),
      step("valid", "invite again, to be accepted", () => withJson("POST", `/accounts/${account}/invitations`, { role: "member" }), {
        keep: (wire, side) => {
          side.state["acceptCode"] = field(wire, "code") ?? ""
          side.normaliser.secret("invitation-code", side.state["acceptCode"])
        }
      })
    ]
  },
  "accounts.invitations": {
    steps: [
      step("unauthenticated", "invitations without a credential", () => get(`/accounts/${account}/invitations`)),
      step("valid", "invitations", () => get(`/accounts/${account}/invitations`, owner)),
      step("bad", "invitations of an invalid name", () => get("/accounts/Not_An%20Account/invitations", owner))
    ]
  },
  "accounts.accept": {
    steps: [
      step("unauthenticated", "accept without a credential", (s) => bare("POST", `/invitations/${s["acceptCode"]}/accept`)),
      step("bad", "accept a code too long", () => bare("POST", `/invitations/${"x".repeat(201)}/accept`, owner)),
      step("valid", "accept as a member already", (s) => bare("POST", `/invitations/${s["acceptCode"]}/accept`, owner)),
      step("valid", "accept as the outsider", (s) => bare("POST", `/invitations/${s["acceptCode"]}/accept`, bearer(tokenOf("outsider")))),
      step("valid", "accept a spent code", (s) => bare("POST", `/invitations/${s["acceptCode"]}/accept`, bearer(tokenOf("outsider")))),
      // The team as it was for the later cases.
      step("valid", "the outsider leaves", () => bare("DELETE", `/accounts/${account}/members/${userId("outsider")}`, bearer(tokenOf("outsider"))))
    ]
  },
  // Issue 28: secrets are written and deleted by managers, listed by members, and nobody else's (404).
  "accounts.setSecret": {
    steps: [
      step("unauthenticated", "set a secret without a credential", () => withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: "v" }, {})),
      step("bad", "set a secret with a schema error", () => withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: 5 })),
      step("bad", "set a secret with an empty value", () => withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: "" })),
      step("bad", "set a secret of an invalid name", () => withJson("PUT", `/accounts/${account}/secrets/api_key`, { value: "v" })),
      step("valid", "set a secret", () => withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: "parity-secret-value" })),
      step("valid", "set it again", () => withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: "parity-secret-value-2" })),
      step("valid", "a member sets a secret (forbidden)", () =>
        withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: "v" }, bearer(tokenOf("member")))),
      step("valid", "an outsider sets a secret (no such account for them)", () =>
        withJson("PUT", `/accounts/${account}/secrets/API_KEY`, { value: "v" }, bearer(tokenOf("outsider"))))
    ]
  },
  "accounts.secrets": {
    steps: [
      step("unauthenticated", "secrets without a credential", () => get(`/accounts/${account}/secrets`)),
      step("valid", "secrets as a member", () => get(`/accounts/${account}/secrets`, bearer(tokenOf("member")))),
      step("valid", "secrets as an outsider", () => get(`/accounts/${account}/secrets`, bearer(tokenOf("outsider")))),
      step("bad", "secrets of an invalid account name", () => get("/accounts/Not_An%20Account/secrets", owner))
    ]
  },
  "accounts.removeSecret": {
    steps: [
      step("unauthenticated", "delete a secret without a credential", () => bare("DELETE", `/accounts/${account}/secrets/API_KEY`)),
      step("bad", "delete a secret of an invalid name", () => bare("DELETE", `/accounts/${account}/secrets/api-key`, owner)),
      step("valid", "a member deletes a secret (forbidden)", () => bare("DELETE", `/accounts/${account}/secrets/API_KEY`, bearer(tokenOf("member")))),
      step("valid", "delete a secret", () => bare("DELETE", `/accounts/${account}/secrets/API_KEY`, owner)),
      step("valid", "delete it again", () => bare("DELETE", `/accounts/${account}/secrets/API_KEY`, owner))
    ]
  },
  "accounts.withdraw": {
    steps: [
      step("unauthenticated", "withdraw without a credential", (s) => bare("DELETE", `/accounts/${account}/invitations/${s["invitation"]}`)),
      step("bad", "withdraw with an id too long", () => bare("DELETE", `/accounts/${account}/invitations/${"x".repeat(101)}`, owner)),
      step("valid", "withdraw", (s) => bare("DELETE", `/accounts/${account}/invitations/${s["invitation"]}`, owner)),
      step("valid", "withdraw again", (s) => bare("DELETE", `/accounts/${account}/invitations/${s["invitation"]}`, owner))
    ]
  },
  "signOn.methods": {
    steps: [
      step("unauthenticated", "the sign-in methods", () => get("/session/methods")),
      step("valid", "the sign-in methods with a token", () => get("/session/methods", owner))
    ],
    noInput: "GET /session/methods takes no input"
  },
  "signOn.login": {
    steps: [
      step("unauthenticated", "single sign-on without a provider", () => get("/oidc/login?next=/")),
      step("valid", "single sign-on with a token", () => get("/oidc/login", owner)),
      step("bad", "single sign-on with a next too long", () => get(`/oidc/login?next=/${"x".repeat(2001)}`))
    ]
  },
  "signOn.callback": {
    steps: [
      step("unauthenticated", "a callback without a provider", () => get("/oidc/callback?code=x&state=y")),
      step("valid", "a callback with an error", () => get("/oidc/callback?error=access_denied")),
      step("bad", "a callback with a code too long", () => get(`/oidc/callback?code=${"x".repeat(4001)}`))
    ]
  },
  "setup.complete": {
    steps: [
      step("unauthenticated", "set up an instance that has users", () =>
        withJson("POST", "/setup", { code: "AAAAA-BBBBB-CCCCC-DDDDD", user_id: "parity-first" }, {})),
      step("bad", "set up with a schema error", () => withJson("POST", "/setup", { code: 5, user_id: "parity-first" }, {})),
      step("bad", "set up with an invalid user id", () => withJson("POST", "/setup", { code: "AAAAA", user_id: "no spaces" }, {})),
      step("valid", "set up with a credential", () => withJson("POST", "/setup", { code: "AAAAA", user_id: "parity-first" }))
    ]
  },
  "tokens.create": {
    steps: [
      step("unauthenticated", "make a token without a credential", () => withJson("POST", "/tokens", { name: "ci", scopes: ["read"] }, {})),
      step("bad", "make a token with an unknown scope", () => withJson("POST", "/tokens", { name: "ci", scopes: ["root"] })),
      step("bad", "make a token without scopes", () => withJson("POST", "/tokens", { name: "ci", scopes: [] })),
      step("bad", "make a token for an account of someone else", () =>
        withJson("POST", "/tokens", { name: "ci", scopes: ["read"], accounts: ["parity-nobody"] })),
      step("valid", "make a read token", () => withJson("POST", "/tokens", { name: "ci", scopes: ["read"], expires_in: 3600 }), {
        keep: (wire, side) => {
          side.state["pat"] = field(wire, "token") ?? ""
          side.state["patId"] = field(wire, "id") ?? ""
          side.normaliser.secret("pat", side.state["pat"])
        }
      }),
      step("valid", "a read token reads", (s) => get("/me", bearer(s["pat"]!))),
      step("valid", "a read token may not make an account", (s) => withJson("POST", "/accounts", { name: "parity-scoped" }, bearer(s["pat"]!)))
    ]
  },
  "tokens.list": {
    steps: [
      step("unauthenticated", "list tokens without a credential", () => get("/tokens")),
      step("valid", "list tokens", () => get("/tokens", owner))
    ],
    noInput: "GET /tokens reads only the caller"
  },
  "tokens.revoke": {
    steps: [
      step("unauthenticated", "revoke a token without a credential", (s) => bare("DELETE", `/tokens/${s["patId"]}`)),
      step("bad", "revoke with an id too long", () => bare("DELETE", `/tokens/${"x".repeat(101)}`, owner)),
      step("valid", "revoke a token that does not exist", () => bare("DELETE", "/tokens/nothing", owner)),
      step("valid", "revoke the read token", (s) => bare("DELETE", `/tokens/${s["patId"]}`, owner)),
      step("valid", "the revoked token", (s) => get("/me", bearer(s["pat"]!)))
    ]
  },
  "accounts.rename": {
    steps: [
      step("unauthenticated", "rename without a credential", () => withJson("PUT", `/accounts/${account}`, { name: renamed }, {})),
      step("bad", "rename with a schema error", () => withJson("PUT", `/accounts/${account}`, { name: 5 })),
      step("bad", "rename to an invalid name", () => withJson("PUT", `/accounts/${account}`, { name: "No Spaces" })),
      step("valid", "rename", () => withJson("PUT", `/accounts/${account}`, { name: renamed })),
      step("valid", "the old name after the rename", () => get(`/accounts/${account}`, owner))
    ]
  },
  "session.signOut": {
    steps: [
      step("unauthenticated", "sign out without a cookie", () => bare("DELETE", "/session")),
      step("valid", "sign out without the CSRF header", (s) => bare("DELETE", "/session", { cookie: s["cookie"]! })),
      step("valid", "sign out", (s) => bare("DELETE", "/session", { cookie: s["cookie"]!, "x-csrf-token": s["csrf"]! })),
      step("valid", "session after signing out", (s) => get("/session", { cookie: s["cookie"]! }))
    ],
    noInput: "DELETE /session reads only the session cookie and its CSRF header"
  },
  "a2a.agentCard": {
    steps: [
      step("unauthenticated", "an agent card without a credential", (s) => get(`/deployments/${s["deployment"]}/a2a/.well-known/agent-card.json`)),
      step("bad", "an agent card of an invalid deployment id", () => get("/deployments/..x/a2a/.well-known/agent-card.json", owner)),
      step("valid", "the agent card", (s) => get(`/deployments/${s["deployment"]}/a2a/.well-known/agent-card.json`, owner))
    ]
  },
  "a2a.rpc": {
    steps: [
      step("unauthenticated", "A2A without a credential", (s) => withJson("POST", `/deployments/${s["deployment"]}/a2a`, { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }, {})),
      step("bad", "A2A with a body that is not JSON", (s) => withJson("POST", `/deployments/${s["deployment"]}/a2a`, "{\"jsonrpc\": ")),
      step("bad", "A2A with an unknown method", (s) => withJson("POST", `/deployments/${s["deployment"]}/a2a`, { jsonrpc: "2.0", id: 2, method: "Dance", params: {} })),
      step("valid", "A2A GetTask of a task that does not exist", (s) => withJson("POST", `/deployments/${s["deployment"]}/a2a`, { jsonrpc: "2.0", id: 3, method: "GetTask", params: { id: "t" } }))
    ]
  },
  "mcp.deployment": {
    steps: [
      step("unauthenticated", "MCP without a credential", (s) => withJson("POST", `/deployments/${s["deployment"]}/mcp`, mcpCall(1, "tools/list"), mcpAccept({}))),
      step("bad", "MCP with a body that is not JSON", (s) => withJson("POST", `/deployments/${s["deployment"]}/mcp`, "{\"jsonrpc\": ", mcpAccept(owner))),
      step("bad", "MCP with an unknown method", (s) => withJson("POST", `/deployments/${s["deployment"]}/mcp`, mcpCall(2, "dance/now"), mcpAccept(owner))),
      step("bad", "MCP without the Accept the transport needs", (s) => withJson("POST", `/deployments/${s["deployment"]}/mcp`, mcpCall(3, "tools/list"))),
      step("valid", "MCP tools/list (answered as an event stream)", (s) => withJson("POST", `/deployments/${s["deployment"]}/mcp`, mcpCall(4, "tools/list"), mcpAccept(owner)))
    ]
  },
  "mcp.deploymentStream": {
    steps: [
      step("unauthenticated", "the MCP stream without a credential", (s) => get(`/deployments/${s["deployment"]}/mcp`)),
      step("bad", "the MCP stream of an invalid deployment id", () => get("/deployments/..x/mcp", owner)),
      step("valid", "the MCP stream of a stateless server: 405", (s) => get(`/deployments/${s["deployment"]}/mcp`, owner))
    ]
  },
  "mcp.catalog": {
    steps: [
      step("unauthenticated", "the catalog's MCP without a credential", () => withJson("POST", "/mcp", mcpCall(1, "initialize", mcpInitialize), mcpAccept({}))),
      step("bad", "the catalog's MCP with a body that is not JSON", () => withJson("POST", "/mcp", "[{", mcpAccept(owner))),
      step("bad", "the catalog's MCP with initialize without its params", () => withJson("POST", "/mcp", mcpCall(2, "initialize"), mcpAccept(owner))),
      step("valid", "the catalog's MCP initialize", () => withJson("POST", "/mcp", mcpCall(3, "initialize", mcpInitialize), mcpAccept(owner)))
    ]
  },
  "mcp.catalogStream": {
    steps: [
      step("unauthenticated", "the catalog's MCP stream without a credential", () => get("/mcp")),
      step("valid", "the catalog's MCP stream of a stateless server: 405", () => get("/mcp", owner))
    ],
    noInput: "GET /mcp takes no input: it answers 405 to whoever may call it"
  },
  "deployments.rollback": {
    steps: [
      step("unauthenticated", "roll back without a credential", (s) => withJson("POST", `/deployments/${s["deployment"]}/rollback`, {}, {})),
      step("bad", "roll back with a schema error", (s) => withJson("POST", `/deployments/${s["deployment"]}/rollback`, { build_id: 5 })),
      step("valid", "roll back the first deployment: nothing to return to", (s) => withJson("POST", `/deployments/${s["deployment"]}/rollback`, {})),
      step("valid", "roll back to a build never deployed", (s) => withJson("POST", `/deployments/${s["deployment"]}/rollback`, { build_id: "b-9" }))
    ]
  },
  "deployments.updateSettings": {
    steps: [
      step("unauthenticated", "set settings without a credential", (s) => withJson("PUT", `/deployments/${s["deployment"]}/settings`, { concurrent_send: "queue" }, {})),
      step("bad", "set settings with a schema error", (s) => withJson("PUT", `/deployments/${s["deployment"]}/settings`, { concurrent_send: "sometimes" })),
      step("bad", "set settings without the setting", (s) => withJson("PUT", `/deployments/${s["deployment"]}/settings`, {})),
      step("valid", "set concurrent_send to reject", (s) => withJson("PUT", `/deployments/${s["deployment"]}/settings`, { concurrent_send: "reject" })),
      step("valid", "set concurrent_send back to interrupt", (s) => withJson("PUT", `/deployments/${s["deployment"]}/settings`, { concurrent_send: "interrupt" }))
    ]
  },
  "deployments.undeploy": {
    steps: [
      step("unauthenticated", "undeploy without a credential", (s) => bare("DELETE", `/deployments/${s["deployment"]}`)),
      step("bad", "undeploy an invalid id", () => bare("DELETE", "/deployments/..x", owner)),
      step("valid", "undeploy", (s) => bare("DELETE", `/deployments/${s["deployment"]}`, owner)),
      step("valid", "undeploy again", (s) => bare("DELETE", `/deployments/${s["deployment"]}`, owner)),
      step("valid", "the deployment after undeploying", (s) => get(`/deployments/${s["deployment"]}`, owner))
    ]
  }
}

/** The body limit of the rename route (its BodyLimit, under the default server-wide 2 MiB). */
const renameLimit = Number(BodyLimits.ofRoute(ApiRoutes.routes.find((r) => r.id === "accounts.rename")!, 2 * 1024 * 1024))

/** A multipart body of text fields, and its content type. */
const multipart = (fields: Record<string, string>) => {
  const boundary = "parity-boundary"
  const parts = Object.entries(fields).map(([name, value]) =>
    `--${boundary}${crlf}content-disposition: form-data; name="${name}"${crlf}${crlf}${value}${crlf}`
  )
  return { type: `multipart/form-data; boundary=${boundary}`, body: `${parts.join("")}--${boundary}--${crlf}` }
}

/**
 * What is the server's rather than a route's. They run before the account
 * is renamed (`serverCasesBefore`), on the agent, deployment, conversation
 * and file the route cases made.
 */
const serverCases: ReadonlyArray<Step> = [
  step("server", "unknown route under the API", () => get("/nothing/here", owner)),
  step("server", "unknown route outside the API", () => ({ method: "GET", path: "/nothing" })),
  step("server", "the root", () => ({ method: "GET", path: "/" })),
  step("server", "wrong method on a route (PATCH /me)", () => bare("PATCH", "/me", owner)),
  step("server", "wrong method on a route (POST /me)", () => withJson("POST", "/me", {})),
  step("server", "wrong method on a public route (DELETE /agents)", () => bare("DELETE", "/agents")),
  step("server", "OPTIONS on a route", () => bare("OPTIONS", "/me")),
  step("server", "a trailing slash", () => get("/me/", owner)),
  step("server", "a path with a .. segment", () => get("/agents/../me", owner)),
  step("server", "a path with a . segment", () => get("/./me", owner)),
  step("server", "a path with an encoded .. segment", () => get("/agents/%2e%2e/me", owner)),
  step("server", "a path with a backslash .. segment", () => get("/agents\\..\\me", owner)),
  step("server", "a query string on a route without one", () => get("/me?x=1&y", owner)),
  step("server", "a percent-encoded path parameter", () => get(`/accounts/${account.replace("-", "%2D")}`, owner)),
  step("server", "a path parameter with broken percent-encoding", () => get("/accounts/%E0%A4%A", owner)),
  step("server", "an absolute-form request target", (s) => ({ ...get("/me", owner), path: `http://127.0.0.1:${s["port"]}/api/v1/me` })),
  step("server", "a declared body past the route's limit", () => withJson("PUT", `/accounts/${account}`, JSON.stringify({ name: "x".repeat(renameLimit) }))),
  step("server", "a declared body past the server's limit", () =>
    withJson("POST", `${agent}/register`, JSON.stringify({ ...registration("b-big"), readme: "y".repeat(2 * 1024 * 1024) }))),
  step("server", "a declared body past the limit, then a request on the same connection", () => ({
    ...withJson("PUT", `/accounts/${account}`, JSON.stringify({ name: "x".repeat(renameLimit) })),
    then: get("/me", owner)
  })),
  step("server", "a chunked body of exactly the route's limit", () => {
    const text = `{"name": "${"x".repeat(renameLimit - 12)}"}`
    return { method: "PUT", path: v1(`/accounts/${account}`), headers: { ...owner, ...jsonType }, chunks: [text.slice(0, 5000), text.slice(5000)] }
  }),
  step("server", "a chunked body within the limit", () => ({
    method: "POST",
    path: v1(`${agent}/register`),
    headers: { ...owner, ...jsonType },
    chunks: [JSON.stringify(registration("b-chunked")).slice(0, 20), JSON.stringify(registration("b-chunked")).slice(20)]
  })),
  step("server", "a body sent after Expect: 100-continue", () => ({
    ...withJson("POST", `${agent}/register`, registration("b-continue")),
    headers: { ...owner, ...jsonType, expect: "100-continue" }
  })),
  step("server", "a POST without any body", () => bare("POST", `${agent}/register`, { ...owner, ...jsonType })),
  step("server", "a JSON body that nests too deep", () => withJson("POST", `${agent}/register`, "[".repeat(100) + "]".repeat(100))),
  step("server", "a form body to a JSON route", () => ({
    ...withForm(`${agent}/register`, { build_id: "b-form", registry: "ghcr.io/acme", spec_content: "name: helper\n" }),
    headers: { ...owner, ...formType }
  })),
  step("server", "a multipart body to a JSON route", () => {
    const { body, type } = multipart({ build_id: "b-multipart", registry: "ghcr.io/acme", spec_content: "name: helper\n" })
    return { method: "POST", path: v1(`${agent}/register`), headers: { ...owner, "content-type": type }, body }
  }),
  step("server", "a broken multipart body", () => ({
    method: "POST",
    path: v1(`${agent}/register`),
    headers: { ...owner, "content-type": "multipart/form-data; boundary=parity-boundary" },
    body: "--parity-boundary\r\ncontent-disposition: form-data; name=\"build_id\"\r\n\r\nb-x"
  })),
  step("server", "two requests on one kept-alive connection", () => ({ ...get("/me", owner), then: get(`/agents?q=${account}`) })),
  step("server", "HEAD on GET /me", () => bare("HEAD", "/me", owner), { read: { kind: "head" } }),
  step("server", "HEAD on the public catalog", () => bare("HEAD", "/agents"), { read: { kind: "head" } }),
  step("server", "HEAD on a file download", (s) => bare("HEAD", `/deployments/${s["deployment"]}/files/${s["file"]}/content`, owner), {
    read: { kind: "head" }
  }),
  step("server", "HEAD on the account event stream", () => bare("HEAD", `/accounts/${account}/events`, owner), { read: { kind: "head" } }),
  step("server", "HEAD on the reply stream", (s) => bare("HEAD", `${conversationPath(s)}/stream`, owner), { read: { kind: "head" } }),
  step("server", "HEAD on an unknown route", () => bare("HEAD", "/nothing"), { read: { kind: "head" } }),
  step("server", "a second reply stream, from the first reply's last event", (s) =>
    get(`${conversationPath(s)}/stream`, { ...owner, "last-event-id": s["lastReplyEvent"] ?? "" }), {
    read: { kind: "frames", until: /^event: message\.completed$/m, ms: 2_000 }
  }),
  step("server", "the OpenAPI document", () => get("/openapi.json")),
  step("server", "the reference page", () => get("/docs"))
]

/**
 * The cases where the servers differ on purpose (`intended`), run after
 * all others: a request one server answers and the other does not must not
 * shift what the others answer (the rate limit counts every request).
 */
const lastCases: ReadonlyArray<Step> = [
  step("server", "a chunked body past the route's limit, then a request on the same connection", () => ({
    method: "PUT",
    path: v1(`/accounts/${renamed}`),
    headers: { ...owner, ...jsonType },
    chunks: ["{\"name\": \"", "x".repeat(renameLimit), "x".repeat(renameLimit), "\"}"],
    then: get("/me", owner)
  })),
  step("server", "a body of invalid UTF-8 within the limit in bytes, past it once decoded", () => ({
    ...withJson("PUT", `/accounts/${renamed}`, ""),
    body: Buffer.concat([Buffer.from("{\"name\": \""), Buffer.alloc(renameLimit / 2, 0xff), Buffer.from("\"}")])
  })),
  step("server", "a request Node's parser refuses", () => ({
    method: "",
    path: "",
    raw: "GET /api/v1/me HTTP/1.1\r\nhost: x\r\nbad header\r\n\r\n"
  }))
]

/** The route case the server cases run before. */
const serverCasesBefore = "accounts.rename"

// ---------------------------------------------------------------------------
// Differences on purpose

interface Intended {
  readonly label: string
  readonly reason: string
  /** What our server answers, and what the platform's does: the difference, exactly. */
  readonly ours: (view: View) => boolean
  readonly platform: (view: View) => boolean
}

const isJsonError = (view: View, status: number, code: string) =>
  view.status === status && view.headers["content-type"] === "application/json" && view.body.includes(`"error":"${code}"`)

/**
 * Where the servers differ on purpose: each time ours answers where the
 * reference cuts the connection or leaves Node's bare answer (README of
 * @hosting/http-node). Each entry is checked to be exactly this difference,
 * so that one that disappears leaves the list.
 */
const intended: ReadonlyArray<Intended> = [
  {
    label: "a chunked body past the route's limit, then a request on the same connection",
    reason: "A body that grows past its limit without declaring its length: ours answers 413 and reads the rest of " +
      "the body and drops it, so that a client still sending reads the 413 and the connection serves the next " +
      "request (NodeRequest.readBody); the platform's reading destroys the request stream at the limit, which " +
      "closes the connection, so the client gets a reset (or at most the 413) and nothing after it.",
    ours: (v) => isJsonError(v, 413, "payload_too_large") && v.next?.status === 200,
    platform: (v) => (v.status === "no answer" || v.status === 413) && (v.next === undefined || v.next.status === "no answer")
  },
  {
    label: "a body of invalid UTF-8 within the limit in bytes, past it once decoded",
    reason: "A body of about half the route's limit, most of it invalid UTF-8: ours counts the bytes that arrive " +
      "(what Content-Length and the limit mean) and the route answers its schema error; the platform counts the " +
      "bytes of the decoded text, where each invalid byte became a 3-byte U+FFFD (about 1.5 times the limit), " +
      "refuses the body as too large and destroys the connection as above.",
    ours: (v) => isJsonError(v, 400, "invalid_request"),
    platform: (v) => v.status === "no answer" || v.status === 413
  },
  {
    label: "a request Node's parser refuses",
    reason: "Node's parser refuses the request before any app sees it: the platform's server leaves Node's bare " +
      "`400 Bad Request` (no body), ours answers with the API's `{ error, details }` body (its clientError handler, " +
      "README of @hosting/http-node).",
    ours: (v) => isJsonError(v, 400, "invalid_request"),
    platform: (v) => v.status === 400 && v.body === "" && v.headers["content-type"] === undefined
  }
]

// ---------------------------------------------------------------------------
// The run

/** Both servers, ours first, each built over its own fresh storage and seeded; they stop with the test's scope. */
const startBoth = (extra: Layer.Layer<never> = Layer.empty) =>
  Effect.gen(function*() {
    const sides: Array<Side> = []
    for (const [name, server] of [["ours", NodeServer.layerTest], ["platform", platformServer]] as const) {
      const context = yield* Layer.build(serverLayer(server).pipe(Layer.provide(extra)))
      const address = Context.get(context, HttpServer.HttpServer).address
      const port = address._tag === "TcpAddress" ? address.port : 0
      yield* Effect.provide(seed, context)
      sides.push({ name, port, context, state: { port: String(port) }, normaliser: new Normaliser(port) })
    }
    return sides as [Side, Side]
  })

interface Outcome {
  readonly compared: number
  /** Answers that differ where no difference is intended. */
  readonly differences: ReadonlyArray<{ readonly label: string; readonly ours: View; readonly platform: View }>
  /** Intended differences that were not what `intended` says. */
  readonly unexpected: ReadonlyArray<string>
}

/** Runs the steps on both servers in order, one server after the other, and compares each pair of answers. */
const compare = (sides: readonly [Side, Side], steps: ReadonlyArray<Step>) =>
  Effect.gen(function*() {
    const differences: Array<Outcome["differences"][number]> = []
    const unexpected: Array<string> = []
    let compared = 0
    for (const s of steps) {
      if (s.kind === "setup") {
        for (const side of sides) yield* s.run(side)
        continue
      }
      const views: Array<View> = []
      for (const side of sides) {
        const wire = yield* exchange(side.port, s.call(side.state), s.read ?? { kind: "whole" })
        s.keep?.(wire, side)
        views.push(viewOf(side, wire))
      }
      const [ours, platform] = views as [View, View]
      compared++
      const known = intended.find((i) => i.label === s.label)
      if (known === undefined) {
        if (JSON.stringify(ours) !== JSON.stringify(platform)) differences.push({ label: s.label, ours, platform })
      } else if (!known.ours(ours) || !known.platform(platform)) {
        unexpected.push(`${s.label}: not the intended difference (${known.reason})\nours: ${JSON.stringify(ours)}\nplatform: ${JSON.stringify(platform)}`)
      }
    }
    const outcome: Outcome = { compared, differences, unexpected }
    return outcome
  })

/**
 * The served API extended as an embedder might: the platform's CORS
 * middleware for one origin, with credentials (its headers come from a
 * pre-response handler), and a middleware of its own that sets a cookie
 * through the answer's cookies (not a header).
 */
const origin = "https://app.example"
const extended = Layer.mergeAll(
  HttpApiBuilder.middlewareCors({ allowedOrigins: [origin], credentials: true, exposedHeaders: ["ratelimit-remaining"] }),
  HttpApiBuilder.middleware((app) =>
    Effect.map(app, (response) => HttpServerResponse.unsafeSetCookie(response, "embedder", "seen", { path: "/", httpOnly: true })))
)

/** What a browser on another origin sends, to routes whose answers differ in kind. */
const corsSteps: ReadonlyArray<Step> = [
  step("server", "CORS: an authorized read", () => get("/me", { ...owner, origin })),
  step("server", "CORS: a read without a credential", () => get("/me", { origin })),
  step("server", "CORS: an unknown route", () => get("/nothing", { origin })),
  step("server", "CORS: a refused body", () => withJson("PUT", `/accounts/${account}`, "{", { ...owner, origin })),
  step("server", "CORS: the preflight of a write", () =>
    bare("OPTIONS", `/accounts/${account}`, { origin, "access-control-request-method": "PUT", "access-control-request-headers": "authorization, content-type" })),
  step("server", "CORS: the account event stream", () => get(`/accounts/${account}/events`, { ...owner, origin }), {
    read: { kind: "frames", until: /^event: ready$/m, ms: 2_000 }
  })
]

describe("HTTP: parity of @hosting/http-node with the platform's Node server", () => {
  it("has a case for every endpoint of the definition, each with an unauthenticated, a valid and a bad-input call", () => {
    expect(Object.keys(routeCases).sort()).toEqual(ApiRoutes.routes.map((r) => r.id).sort())
    const missing: Array<string> = []
    for (const [id, c] of Object.entries(routeCases)) {
      const route = ApiRoutes.routes.find((r) => r.id === id)!
      const authenticated = route.middleware.has(Authentication.Authentication as unknown as HttpApiMiddleware.TagClassAny)
      // A public route's call without a credential is its valid call.
      const needed: Array<Kind> = authenticated ? ["unauthenticated", "valid"] : ["unauthenticated"]
      if (c.noInput === undefined) needed.push("bad")
      const kinds = new Set(c.steps.map((s) => s.kind))
      for (const kind of needed) if (!kinds.has(kind)) missing.push(`${id}: no ${kind} call`)
    }
    expect(missing).toEqual([])
    const labels = [...Object.values(routeCases).flatMap((c) => c.steps), ...serverCases, ...lastCases, ...corsSteps]
      .filter((s) => s.kind !== "setup")
      .map((s) => s.label)
    expect(labels.length).toBe(new Set(labels).size)
    expect(intended.map((i) => i.label).sort()).toEqual(lastCases.map((s) => s.label).sort())
  })

  it.scoped("every endpoint answers the same on both servers, but for the intended differences", () =>
    Effect.gen(function*() {
      const sides = yield* startBoth()
      const ids = Object.keys(routeCases)
      const at = ids.indexOf(serverCasesBefore)
      const outcome = yield* compare(sides, [
        ...ids.slice(0, at).flatMap((id) => routeCases[id]!.steps),
        ...serverCases,
        ...ids.slice(at).flatMap((id) => routeCases[id]!.steps),
        ...lastCases
      ])
      expect(outcome.differences).toEqual([])
      expect(outcome.unexpected).toEqual([])
      const all = [...Object.values(routeCases).flatMap((c) => c.steps), ...serverCases, ...lastCases]
      expect(outcome.compared).toBe(all.filter((s) => s.kind !== "setup").length)
    }), 60_000)

  it.scoped("an API extended with the platform's middleware (CORS) and a cookie-setting one answers the same on both servers", () =>
    Effect.gen(function*() {
      const outcome = yield* compare(yield* startBoth(extended), corsSteps)
      expect(outcome.differences).toEqual([])
      expect(outcome.compared).toBe(corsSteps.length)
    }), 30_000)
})
