/**
 * What the route-wide tests (authorization matrix, input properties, OpenAPI
 * conformance) share: the API on a loopback server over in-memory (or
 * another) storage that records every write with the request that caused it,
 * a raw HTTP/1.1 client (so that a test can send bytes no well-behaved client would), the
 * endpoints reflected from @hosting/api, and a validator of answers against
 * the generated OpenAPI document.
 */
import { type HttpApiEndpoint, type HttpApiMiddleware, HttpServer, HttpServerRequest, OpenApi } from "@effect/platform"
import { Authentication, HostingApi } from "@hosting/api"
import { Cluster, Identity, Ids, Ports } from "@hosting/core"
import * as Fixtures from "@hosting/testing/Fixtures"
import { ApiApp, ApiRoutes, HostingHttp } from "@hosting/http"
import { NodeServer } from "@hosting/http-node"
import { FakeCluster, MemoryStorage, Seed, TestServices } from "@hosting/testing"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Context, DateTime, Effect, FiberRef, Layer, Option } from "effect"
import * as Net from "node:net"

// ajv-formats is CommonJS; under ESM its function is the default export's default.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020
) => Ajv2020

// ---------------------------------------------------------------------------
// Writes, each with the request that caused it

/** One write to a storage port or to the cluster. */
export interface Write {
  readonly request: string | undefined
  readonly write: string
}

/** Every committed write of the server, in order. Writes of a failed transaction are dropped, as the storage drops them. */
export const writes: Array<Write> = []

/** The `x-test-request` header of the request being handled, inherited by the fibers it forks. */
const currentRequest = FiberRef.unsafeMake<string | undefined>(undefined)
/** The writes of the open transaction, kept until it commits. */
const pendingWrites = FiberRef.unsafeMake<Array<Write> | undefined>(undefined)

/** Methods that change state; reads and the periodic housekeeping (pruning, leases) are not recorded. */
const isWrite = (name: string) =>
  /^(add|remove|upsert|insert|ensure|rename|set|publish|append|mark|update|decide|record|delete|put|apply|restart|start)/.test(name) &&
  !["pruneExpired", "renewLeases", "recordPoll"].includes(name)

const record = (write: string) =>
  Effect.flatMap(FiberRef.get(pendingWrites), (pending) =>
    Effect.flatMap(FiberRef.get(currentRequest), (request) =>
      Effect.sync(() => void (pending ?? writes).push({ request, write }))))

/** Answers of a turn's start that refuse it: by the port's contract they store nothing. */
const refusedTurns = new Set(["NotOwner", "LimitReached", "ReplyInProgress"])

/** True for the answer of a write that changed nothing: `false`, or a turn the store refused. */
const changedNothing = (result: unknown) =>
  result === false ||
  (typeof result === "object" && result !== null && "_tag" in result && refusedTurns.has(String((result as { _tag: unknown })._tag)))

/** The service with each write method recording itself once it succeeds, unless it answered that it changed nothing. */
const spied = <S extends object>(port: string, service: S): S => {
  const wrapped: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(service)) {
    wrapped[name] = typeof member === "function" && isWrite(name)
      ? (...args: Array<unknown>) =>
        Effect.tap(member(...args) as Effect.Effect<unknown>, (result) => changedNothing(result) ? Effect.void : record(`${port}.${name}`))
      : member
  }
  return wrapped as S
}

const spiedTransactor = (inner: Ports.Transactor["Type"]): Ports.Transactor["Type"] => ({
  withTransaction: (effect) =>
    Effect.flatMap(FiberRef.get(pendingWrites), (outer) => {
      if (outer !== undefined) return inner.withTransaction(effect)
      const buffer: Array<Write> = []
      return inner.withTransaction(effect).pipe(
        Effect.locally(pendingWrites, buffer),
        Effect.tap(() => Effect.sync(() => void writes.push(...buffer)))
      )
    })
})

/** A storage's ports with their writes recorded in `writes`. */
export const recorded = (storage: Layer.Layer<Ports.StoragePorts>): Layer.Layer<Ports.StoragePorts> =>
  Layer.effectContext(Effect.gen(function*() {
    const transactor = yield* Ports.Transactor
    return Context.make(Ports.Transactor, spiedTransactor(transactor)).pipe(
      Context.add(Ports.AccountStore, spied("AccountStore", yield* Ports.AccountStore)),
      Context.add(Ports.TokenStore, spied("TokenStore", yield* Ports.TokenStore)),
      Context.add(Ports.AgentStore, spied("AgentStore", yield* Ports.AgentStore)),
      Context.add(Ports.EventLog, spied("EventLog", yield* Ports.EventLog)),
      Context.add(Ports.DeploymentStore, spied("DeploymentStore", yield* Ports.DeploymentStore)),
      Context.add(Ports.ConversationStore, spied("ConversationStore", yield* Ports.ConversationStore)),
      Context.add(Ports.FileStore, spied("FileStore", yield* Ports.FileStore)),
      Context.add(Ports.TraceStore, spied("TraceStore", yield* Ports.TraceStore)),
      Context.add(Ports.DeviceCodeStore, spied("DeviceCodeStore", yield* Ports.DeviceCodeStore))
    )
  })).pipe(Layer.provide(storage))

/** MemoryStorage whose writes are recorded in `writes`. */
export const recordedStorage: Layer.Layer<Ports.StoragePorts> = recorded(MemoryStorage.layer)

/** The fake cluster, its changes recorded in `writes` too. */
export const recordedCluster = Layer.effect(Cluster.Cluster, Effect.map(FakeCluster.make(), (c) => spied("Cluster", c)))

/** The writes caused by one request, once the fibers it started had a moment to run. */
export const writesOf = (request: string) =>
  Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5))).pipe(
    Effect.map(() => writes.filter((w) => w.request === request).map((w) => w.write))
  )

// ---------------------------------------------------------------------------
// The server

const tagRequests = (app: Effect.Effect<any, any, any>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.locally(app, currentRequest, request.headers["x-test-request"]))

/**
 * The API on loopback over recorded storage (in memory, unless `storageLayer`
 * names another), the echo agent and the fake cluster.
 */
export const layer = (options: HostingHttp.HostingHttpOptions & TestServices.TestServicesOptions = {}) =>
  ApiApp.serve(tagRequests as never).pipe(
    Layer.provide(HostingHttp.layer(options)),
    Layer.provideMerge(TestServices.make({
      echo: { delay: 0 },
      ...options,
      storageLayer: options.storageLayer === undefined ? recordedStorage : recorded(options.storageLayer),
      clusterLayer: recordedCluster
    })),
    Layer.provideMerge(NodeServer.layerTest)
  )

/** The port the test server listens on. */
export const port = HttpServer.addressWith((address) => Effect.succeed(address._tag === "TcpAddress" ? address.port : 0))

// ---------------------------------------------------------------------------
// A raw HTTP/1.1 client

/** A request as bytes will be sent: nothing is checked or normalised. */
export interface Call {
  readonly method: string
  /** The request target, sent as it is (already encoded, or deliberately not). */
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
  /** A Content-Length other than the body's (a truncated body); the connection's sending side is closed after the body. */
  readonly declaredLength?: number
}

export interface Answer {
  readonly status: number
  /** Lower-case names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
  readonly text: string
  /** The parsed body when it is JSON. */
  readonly json: unknown
  /** The id the request was sent with (`x-test-request`), to find its writes. */
  readonly request: string
}

const crlf = "\r\n"

const concat = (parts: ReadonlyArray<Uint8Array>) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

const indexOf = (data: Uint8Array, text: string, from = 0) => Buffer.from(data).indexOf(text, from)

/** Decodes a chunked body; undefined until the last chunk arrived. */
const dechunk = (data: Uint8Array): Uint8Array | undefined => {
  const parts: Array<Uint8Array> = []
  let at = 0
  while (true) {
    const lineEnd = indexOf(data, crlf, at)
    if (lineEnd < 0) return undefined
    const size = parseInt(new TextDecoder().decode(data.subarray(at, lineEnd)), 16)
    if (size === 0) return concat(parts)
    if (lineEnd + 2 + size + 2 > data.byteLength) return undefined
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

const parseHead = (head: string) => {
  const [statusLine, ...lines] = head.split(crlf)
  const status = Number(statusLine!.split(" ")[1])
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(":")
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  return { status, headers }
}

/** Sends bytes to the server and reads one answer; a server-sent event stream is cut after its head. */
const exchange = (portNumber: number, request: Uint8Array, halfClose: boolean, timeoutMs: number) =>
  new Promise<{ status: number; headers: Record<string, string>; body: Uint8Array }>((resolve, reject) => {
    const socket = Net.connect(portNumber, "127.0.0.1")
    const chunks: Array<Uint8Array> = []
    let settled = false
    const finish = (result?: { status: number; headers: Record<string, string>; body: Uint8Array }, error?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (result) resolve(result)
      else reject(error ?? new Error("no answer"))
    }
    const timer = setTimeout(() => finish(undefined, new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    const tryParse = (closed: boolean) => {
      const data = concat(chunks)
      const headEnd = indexOf(data, `${crlf}${crlf}`)
      if (headEnd < 0) return closed ? finish(undefined, new Error("connection closed before the answer's head")) : undefined
      const { headers, status } = parseHead(new TextDecoder().decode(data.subarray(0, headEnd)))
      // 1xx answers (100 Continue) precede the real one.
      if (status >= 100 && status < 200) {
        chunks.splice(0, chunks.length, data.subarray(headEnd + 4))
        return tryParse(closed)
      }
      const rest = data.subarray(headEnd + 4)
      if ((headers["content-type"] ?? "").startsWith("text/event-stream")) return finish({ status, headers, body: rest })
      if (headers["transfer-encoding"]?.includes("chunked")) {
        const body = dechunk(rest)
        if (body !== undefined) return finish({ status, headers, body })
      } else if (headers["content-length"] !== undefined) {
        const length = Number(headers["content-length"])
        if (rest.byteLength >= length) return finish({ status, headers, body: rest.subarray(0, length) })
      } else if (status === 204 || status === 304) {
        return finish({ status, headers, body: new Uint8Array() })
      }
      if (closed) finish({ status, headers, body: rest })
    }
    socket.on("data", (chunk) => {
      chunks.push(new Uint8Array(chunk))
      tryParse(false)
    })
    socket.on("end", () => tryParse(true))
    socket.on("close", () => tryParse(true))
    socket.on("error", (error) => finish(undefined, error))
    socket.write(request, () => {
      if (halfClose) socket.end()
    })
  })

const encodeCall = (call: Call, portNumber: number, request: string): Uint8Array => {
  const body = typeof call.body === "string" ? new TextEncoder().encode(call.body) : call.body
  const headers: Record<string, string> = {
    host: `127.0.0.1:${portNumber}`,
    connection: "close",
    "x-test-request": request,
    ...call.headers
  }
  const names = new Set(Object.keys(headers).map((h) => h.toLowerCase()))
  if (!names.has("content-length") && !names.has("transfer-encoding") && (body !== undefined || call.declaredLength !== undefined)) {
    headers["content-length"] = String(call.declaredLength ?? body!.byteLength)
  }
  const head = `${call.method} ${call.path} HTTP/1.1${crlf}` +
    Object.entries(headers).map(([name, value]) => `${name}: ${value}${crlf}`).join("") + crlf
  return concat([new TextEncoder().encode(head), body ?? new Uint8Array()])
}

/** Sends a call and reads its answer; fails when no answer comes (the connection closes first, or the time runs out). */
export const trySend = (call: Call, timeoutMs = 10_000) =>
  Effect.flatMap(port, (portNumber) =>
    Effect.tryPromise(async (): Promise<Answer> => {
      const request = globalThis.crypto.randomUUID()
      const bytes = encodeCall(call, portNumber, request)
      const answer = await exchange(portNumber, bytes, call.declaredLength !== undefined, timeoutMs)
      const text = new TextDecoder().decode(answer.body)
      let json: unknown = undefined
      if ((answer.headers["content-type"] ?? "").includes("json")) {
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
      }
      return { ...answer, text, json, request }
    }))

/** Sends a call and reads its answer; no answer is a defect. */
export const send = (call: Call, timeoutMs = 10_000) => Effect.orDie(trySend(call, timeoutMs))

/** A JSON body with its content type. */
export const jsonBody = (value: unknown) => ({
  headers: { "content-type": "application/json" },
  body: JSON.stringify(value)
})

/** A form body with its content type. */
export const formBody = (fields: Record<string, string>) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString()
})

// ---------------------------------------------------------------------------
// The endpoints of the API

export interface Endpoint {
  /** `group.endpoint`, the OpenAPI operationId. */
  readonly id: string
  readonly method: string
  /** The path with `:param` segments, as HttpApi keeps it. */
  readonly path: string
  /** The OpenAPI path template (`{param}`). */
  readonly template: string
  readonly authenticated: boolean
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
}

/** Every endpoint of HostingApi, as the server reads the definition (so that a new route shows up without anyone listing it). */
export const endpoints: ReadonlyArray<Endpoint> = ApiRoutes.routes.map((route) => ({
  id: route.id,
  method: route.method,
  path: route.path,
  template: route.path.replace(/:(\w+)\??/g, "{$1}"),
  authenticated: route.middleware.has(Authentication.Authentication as unknown as HttpApiMiddleware.TagClassAny),
  endpoint: route.endpoint
}))

export const endpointById = (id: string) => {
  const found = endpoints.find((e) => e.id === id)
  if (found === undefined) throw new Error(`no endpoint ${id} in HostingApi`)
  return found
}

// ---------------------------------------------------------------------------
// Conformance of answers to the OpenAPI document

type Json = Record<string, any>

/** The document the server serves at /api/v1/openapi.json. */
export const document: Json = OpenApi.fromApi(HostingApi.HostingApi) as Json

/**
 * The schemas with Effect's markers of `unknown` and `{}` (`"$id": "/schemas/unknown"`) left out: they
 * repeat one `$id` in several places, which a JSON Schema validator refuses as ambiguous.
 */
const withoutMarkerIds = (schema: unknown): unknown =>
  JSON.parse(JSON.stringify(schema, (key, value) => key === "$id" && String(value).startsWith("/schemas/") ? undefined : value))

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
addFormats(ajv)
ajv.addSchema({ $id: "openapi.json", components: withoutMarkerIds(document["components"]) })
const validators = new Map<string, ValidateFunction>()

const validatorFor = (key: string, schema: Json) => {
  let validate = validators.get(key)
  if (validate === undefined) {
    const rebased = JSON.parse(JSON.stringify(withoutMarkerIds(schema)).replaceAll("\"#/components/", "\"openapi.json#/components/"))
    validate = ajv.compile(rebased)
    validators.set(key, validate)
  }
  return validate
}

/** What about an answer the document does not say; empty when the document describes it. */
export const conformanceProblems = (endpoint: Endpoint, answer: Pick<Answer, "status" | "headers" | "json" | "text">) => {
  const problems: Array<string> = []
  const where = `${endpoint.method} ${endpoint.template} -> ${answer.status}`
  const operation: Json | undefined = document["paths"]?.[endpoint.template]?.[endpoint.method.toLowerCase()]
  if (operation === undefined) return [`${where}: the operation is not in the document`]
  if (operation["operationId"] !== endpoint.id) problems.push(`${where}: operationId ${operation["operationId"]}, not ${endpoint.id}`)
  const response: Json | undefined = operation["responses"]?.[String(answer.status)] ?? operation["responses"]?.["default"]
  if (response === undefined) return [...problems, `${where}: status not documented (${answer.text.slice(0, 200)})`]
  const content: Json | undefined = response["content"]
  const type = (answer.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase()
  if (content === undefined) {
    if (answer.text.length > 0) problems.push(`${where}: documented without a body, answered ${type}`)
    return problems
  }
  const media = content[type] ?? content["*/*"]
  if (media === undefined) return [...problems, `${where}: content type ${type || "(none)"} not documented (${Object.keys(content)})`]
  if (type.endsWith("json") && media["schema"] !== undefined) {
    const validate = validatorFor(`${endpoint.id} ${answer.status} ${type}`, media["schema"])
    if (!validate(answer.json)) {
      problems.push(`${where}: body does not match the schema: ${ajv.errorsText(validate.errors)} in ${answer.text.slice(0, 300)}`)
    }
  }
  return problems
}

// ---------------------------------------------------------------------------
// A world to call the routes in

/** A seeded team plus a second plain member and an expired token of the owner. */
export interface World {
  readonly team: Seed.Team
  /** Another member (role member) of the same account. */
  readonly other: { readonly id: Ids.UserId; readonly token: string }
  /** A token of the team's owner that expired long ago. */
  readonly expired: string
}

export const world = Effect.gen(function*() {
  const team = yield* Seed.team
  const otherId = Ids.UserId.make(`other-${globalThis.crypto.randomUUID()}`)
  const otherToken = `${otherId}-token`
  yield* Fixtures.load({
    users: [{ id: otherId, name: "Another member", tokens: [otherToken] }],
    accounts: [{ name: team.account, members: [{ user: otherId, role: "member" }] }]
  })
  const expired = `expired-${globalThis.crypto.randomUUID()}`
  const identity = yield* Identity.Identity
  yield* identity.issue(team.principals.owner.user.id, expired, Option.some(DateTime.unsafeMake(0)))
  const result: World = { team, other: { id: otherId, token: otherToken }, expired }
  return result
}).pipe(Effect.orDie)

/** The JSON error body of extensions.md: a snake_case code and a sentence. */
export const errorBodyProblems = (answer: Answer): Array<string> => {
  const type = answer.headers["content-type"] ?? ""
  if (!type.startsWith("application/json")) return [`error answer ${answer.status} is ${type || "untyped"}, not JSON: ${answer.text.slice(0, 200)}`]
  const body = answer.json as Record<string, unknown> | undefined
  if (typeof body !== "object" || body === null) return [`error answer ${answer.status} has no JSON object: ${answer.text.slice(0, 200)}`]
  const problems: Array<string> = []
  if (typeof body["error"] !== "string" || !/^[a-z][a-z0-9_]*$/.test(body["error"])) problems.push(`error is not a snake_case code: ${answer.text}`)
  if (typeof body["details"] !== "string" || body["details"].length === 0) problems.push(`details is not a sentence: ${answer.text}`)
  if (/\bat .+:\d+:\d+|node_modules|\/work\/|SELECT |INSERT /i.test(answer.text)) problems.push(`the body shows internals: ${answer.text}`)
  return problems
}

// ---------------------------------------------------------------------------
// Resources to call the routes on, made through the API as a client would

/** `Authorization: Bearer <token>`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

const must = (what: string, expected: number) => (answer: Answer) =>
  answer.status === expected
    ? Effect.succeed(answer)
    : Effect.dieMessage(`${what}: expected ${expected}, got ${answer.status} ${answer.text.slice(0, 300)}`)

/** A JSON call as a token's holder, which must answer `expected`. */
export const call = (token: string, method: string, path: string, body: unknown, expected: number) => {
  const json = body === undefined ? undefined : jsonBody(body)
  return Effect.flatMap(
    send({ method, path: `/api/v1${path}`, headers: { ...bearer(token), ...json?.headers }, ...(json ? { body: json.body } : {}) }),
    must(`${method} ${path}`, expected)
  )
}

/** A valid registration body. */
export const registration = (build_id: string) => ({
  build_id,
  registry: "ghcr.io/acme",
  spec_content: "name: helper\ndescription: Helps people\nport: 8080\nenv:\n  MODE: fast\n",
  readme: "# Helper"
})

/** Build b-1 of the team's agent `helper`, registered, not published. */
export const registered = (w: World) => call(w.team.tokens.owner, "POST", `/agents/${w.team.account}/helper/register`, registration("b-1"), 201)

/** `helper` registered, with the trace of `otlpExport` exported by its owner. */
export const exportedTrace = (w: World) =>
  Effect.zipRight(registered(w), call(w.team.tokens.owner, "POST", "/otlp/v1/traces", otlpExport(w.team.account, "helper"), 200))

/** `helper` with b-1 published as 1.0.0. */
export const published = (w: World) =>
  Effect.zipRight(
    registered(w),
    call(w.team.tokens.owner, "POST", `/agents/${w.team.account}/helper/publish`, { build_id: "b-1", version: "1.0.0" }, 201)
  )

/** Channel `stable` of a published `helper` set to 1.0.0. */
export const stableChannel = (w: World) =>
  call(w.team.tokens.owner, "PUT", `/agents/${w.team.account}/helper/channels/stable`, { version: "1.0.0" }, 200)

/** `helper` published as 1.0.0, with channel `stable` naming it. */
export const channelSet = (w: World) => Effect.zipRight(published(w), stableChannel(w))

/** `helper` published as 1.0.0, then yanked. */
export const yanked = (w: World) =>
  Effect.zipRight(
    published(w),
    call(w.team.tokens.owner, "POST", `/agents/${w.team.account}/helper/versions/1.0.0/yank`, { reason: "broken" }, 200)
  )

/** `helper` deployed by its own account: the deployment id and namespace. */
export const deployed = (w: World) =>
  Effect.gen(function*() {
    yield* published(w)
    const answer = yield* call(w.team.tokens.owner, "POST", `/agents/${w.team.account}/helper/deployments`, {}, 201)
    const record = answer.json as { id: string; namespace: string }
    return { deployment: record.id, namespace: record.namespace }
  })

/** The secret API_KEY of the team, set by its owner. */
export const secretOf = (w: World) =>
  call(w.team.tokens.owner, "PUT", `/accounts/${w.team.account}/secrets/API_KEY`, { value: "the value" }, 200)

/** `helper` deployed twice by its own account, b-1 (1.0.0) then b-2 (2.0.0): the second deployment, which can roll back to b-1. */
export const redeployed = (w: World) =>
  Effect.gen(function*() {
    yield* deployed(w)
    const agent = `/agents/${w.team.account}/helper`
    yield* call(w.team.tokens.owner, "POST", `${agent}/register`, registration("b-2"), 201)
    yield* call(w.team.tokens.owner, "POST", `${agent}/publish`, { build_id: "b-2", version: "2.0.0" }, 201)
    const answer = yield* call(w.team.tokens.owner, "POST", `${agent}/deployments`, { build_id: "b-2" }, 201)
    const record = answer.json as { id: string; namespace: string }
    return { deployment: record.id, namespace: record.namespace }
  })

/** A pod of the deployment's namespace. */
export const podOf = (namespace: string) =>
  Effect.flatMap(Cluster.Cluster, (cluster) => cluster.listPods(namespace)).pipe(
    Effect.flatMap((pods) => pods[0] ? Effect.succeed(pods[0].name) : Effect.dieMessage(`no pod in ${namespace}`)),
    Effect.orDie
  )

/** Polls a conversation's history until its latest reply is no longer streaming. */
export const settled = (token: string, deployment: string, conversation: string) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 10_000
    while (true) {
      const history = yield* call(token, "GET", `/deployments/${deployment}/messaging/conversations/${conversation}/messages`, undefined, 200)
      const last = (history.json as { messages: Array<{ role: string; status: string }> }).messages.at(-1)
      if (last?.role === "assistant" && last.status !== "streaming") return
      if (Date.now() > deadline) return yield* Effect.dieMessage(`reply still streaming: ${history.text}`)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
  })

/** A conversation of the token's holder on the deployment, its first reply finished. */
export const conversationOf = (token: string, deployment: string) =>
  Effect.gen(function*() {
    const conversation = globalThis.crypto.randomUUID()
    yield* call(token, "POST", `/deployments/${deployment}/messaging/conversations/${conversation}/messages`, { content: "hello agent" }, 200)
    yield* settled(token, deployment, conversation)
    return conversation
  })

/** An invitation to the world's account made by its owner: its id and its one-time code. */
export const invitationOf = (w: World, role = "member") =>
  Effect.map(
    call(w.team.tokens.owner, "POST", `/accounts/${w.team.account}/invitations`, { role }, 201),
    (answer) => answer.json as { readonly id: string; readonly code: string; readonly url: string }
  )

/** A personal access token of the token's holder, made through the API: its id and its secret. */
export const personalTokenOf = (token: string, scopes: ReadonlyArray<string> = ["read"], extra: Record<string, unknown> = {}) =>
  Effect.map(
    call(token, "POST", "/tokens", { name: `token-${globalThis.crypto.randomUUID().slice(0, 8)}`, scopes, ...extra }, 201),
    (answer) => answer.json as { readonly id: string; readonly token: string }
  )

/** A file of the token's holder on the deployment: reserved, uploaded (5 bytes) or ready. */
export const fileOf = (token: string, deployment: string, stage: "pending" | "uploaded" | "ready") =>
  Effect.gen(function*() {
    const reserved = yield* call(token, "POST", `/deployments/${deployment}/files`, { filename: "notes.txt", content_type: "text/plain", size: 5 }, 201)
    const key = (reserved.json as { key: string }).key
    if (stage === "pending") return key
    yield* send({
      method: "PUT",
      path: `/api/v1/deployments/${deployment}/files/${key}/content`,
      headers: { ...bearer(token), "content-type": "application/octet-stream" },
      body: "hello"
    }).pipe(Effect.flatMap(must("upload", 200)))
    if (stage === "uploaded") return key
    yield* call(token, "POST", `/deployments/${deployment}/files/${key}/complete`, undefined, 200)
    return key
  })

/** A browser session of the token's holder: the cookie pair and the CSRF value. */
export const sessionOf = (token: string) =>
  Effect.gen(function*() {
    const answer = yield* call(token, "POST", "/session", { token }, 200)
    const cookie = (answer.headers["set-cookie"] ?? "").split(";")[0]!
    return { cookie, csrf: (answer.json as { csrf: string }).csrf }
  })

/** A pending device login: its user code. */
export const deviceLogin = send({ method: "POST", path: "/api/v1/oauth/device/code", ...formBody({ client_id: "matrix" }) }).pipe(
  Effect.flatMap(must("device code", 200)),
  Effect.map((answer) => (answer.json as { user_code: string }).user_code)
)

/** The trace id of `otlpExport`'s span. */
export const otlpTraceId = "5b8efff798038103d269b633813fc60c"

/** An OTLP/HTTP JSON export of one root span for `account/agent`. */
export const otlpExport = (account: string, agent: string) => ({
  resourceSpans: [{
    resource: { attributes: [{ key: "service.name", value: { stringValue: `${account}/${agent}` } }] },
    scopeSpans: [{
      spans: [{
        traceId: otlpTraceId,
        spanId: "eee19b7ec3c1b174",
        name: "chat",
        startTimeUnixNano: "1700000000000000000",
        endTimeUnixNano: "1700000000100000000",
        status: { code: 1 },
        attributes: [{ key: "input.value", value: { stringValue: "hi" } }]
      }]
    }]
  }]
})
