/**
 * Every route of @hosting/api under generated and hostile input. Inputs come
 * from the route's own request schemas (`Arbitrary.make`, both values that
 * pass them and values of the right structure that may not), and from a
 * table of hostile variants of a valid request: wrong types, huge strings,
 * deep nesting, invalid UTF-8, header injection, path traversal, wrong
 * content types, truncated and missing bodies.
 *
 * Whatever the input: the server never answers 5xx; an error answer is the
 * JSON `{ error, details }` body (the approval page answers its form errors
 * as HTML, as documented); every answer matches the OpenAPI document; and a
 * refused request writes nothing (no storage or cluster write is traced back
 * to it, including from the fibers it started). The same properties hold
 * on every storage: each test file `InputProperties*.test.ts` runs them on one.
 */
import { HttpApiSchema } from "@effect/platform"
import { describe, expect, layer as withLayer } from "@effect/vitest"
import type { Ports } from "@hosting/core"
import { Arbitrary, Effect, FastCheck as fc, type Layer, Option, Schema } from "effect"
import {
  type Answer,
  bearer,
  call,
  type Call,
  conformanceProblems,
  conversationOf,
  deployed,
  deviceLogin,
  type Endpoint,
  endpointById,
  endpoints,
  errorBodyProblems,
  fileOf,
  layer,
  otlpExport,
  otlpTraceId,
  invitationOf,
  personalTokenOf,
  podOf,
  stableChannel,
  registration,
  sessionOf,
  trySend,
  world,
  writesOf
} from "./RouteHarness.js"

/** Valid values of every path parameter, in one world. */
type Params = Record<string, string>

interface Context {
  readonly token: string
  readonly params: Params
  readonly account: string
  readonly userCode: string
  readonly session: { readonly cookie: string; readonly csrf: string }
}

/** A world per route, so that what one route changes (a rename, an undeploy) does not steer another. */
const contextFor = Effect.gen(function*() {
  const w = yield* world
  const token = w.team.tokens.owner
  const { deployment, namespace } = yield* deployed(w)
  const params: Params = {
    account: w.team.account,
    user: w.other.id,
    name: "helper",
    deploymentId: deployment,
    conversationId: yield* conversationOf(token, deployment),
    fileKey: yield* fileOf(token, deployment, "ready"),
    key: yield* fileOf(token, deployment, "uploaded"),
    namespace,
    cmname: "helper-config",
    pod: yield* podOf(namespace),
    tokenId: (yield* personalTokenOf(token)).id,
    secret: "API_KEY",
    invitationId: (yield* invitationOf(w)).id,
    code: (yield* invitationOf(w)).code,
    channel: "stable",
    version: "1.0.0",
    traceId: otlpTraceId
  }
  yield* stableChannel(w)
  yield* call(token, "POST", "/otlp/v1/traces", otlpExport(w.team.account, "helper"), 200)
  const context: Context = { token, params, account: w.team.account, userCode: yield* deviceLogin, session: yield* sessionOf(token) }
  return context
})

/** A valid body of each route that takes one (JSON, or form fields for the form routes). */
const validPayload = (id: string, c: Context): unknown => {
  switch (id) {
    case "agents.register":
      return registration("b-2")
    case "agents.publish":
      return { build_id: "b-1", version: "1.0.0" }
    case "agents.setChannel":
      return { version: "1.0.0" }
    case "agents.yank":
      return { reason: "broken" }
    case "accounts.rename":
      return { name: c.account }
    case "accounts.create":
      return { name: `${c.account}-new` }
    case "accounts.setMember":
    case "accounts.invite":
      return { role: "member" }
    case "accounts.setSecret":
      return { value: "a secret value" }
    case "deployments.deploy":
      return { env: { MODE: "fast" } }
    case "deployments.updateSettings":
      return { concurrent_send: "queue" }
    case "chat.setTitle":
      return { title: "A title" }
    case "chat.send":
      return { content: "hello" }
    case "files.reserve":
      return { filename: "a.txt", content_type: "text/plain", size: 3 }
    case "traces.ingest":
      return otlpExport(c.account, "helper")
    case "oauth.deviceCode":
      return { client_id: "cli" }
    case "oauth.token":
      return { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: "nothing" }
    case "oauth.revoke":
      return { token: "whatever" }
    case "oauth.deviceSession":
      return { token: c.token }
    case "oauth.deviceDecision":
      return { user_code: c.userCode, decision: "deny", csrf: c.session.csrf }
    case "session.signIn":
      return { token: c.token }
    case "setup.complete":
      return { code: "AAAAA-BBBBB-CCCCC-DDDDD", user_id: "first-user", name: "First" }
    case "tokens.create":
      return { name: "ci", scopes: ["read", "chat"], expires_in: 3600 }
    case "mcp.deployment":
      return { jsonrpc: "2.0", id: 1, method: "tools/list" }
    case "mcp.catalog":
      return { jsonrpc: "2.0", id: 1, method: "resources/list" }
    default:
      return undefined
  }
}

const validQuery = (id: string, c: Context): Params => id === "deployments.configMap" || id === "deployments.restartPod" ? { account: c.account } : {}

/** The POST routes of the MCP servers, which speak JSON-RPC. */
const isMcpRpc = (e: Endpoint) => e.id === "mcp.deployment" || e.id === "mcp.catalog"

/** How a route's body is encoded. */
const bodyKind = (e: Endpoint): "json" | "form" | "bytes" | "none" => {
  if (e.id === "files.upload") return "bytes"
  const payload = e.endpoint.payloadSchema
  if (Option.isNone(payload) || e.method === "GET" || e.method === "DELETE") return "none"
  return HttpApiSchema.getEncoding(payload.value.ast).kind === "UrlParams" ? "form" : "json"
}

/** One request in parts: each part left out takes the valid one. */
interface Input {
  readonly label: string
  readonly params?: Params
  /** A raw query string (without `?`), or fields. */
  readonly query?: string | Params
  /** The body as it goes on the wire. */
  readonly body?: string | Uint8Array
  /** A value to encode as the route encodes its body. */
  readonly payload?: unknown
  readonly headers?: Record<string, string>
  /** Leave the default content type out. */
  readonly noContentType?: boolean
  readonly declaredLength?: number
  /** Path parameters inserted as they are, not percent-encoded. */
  readonly rawParams?: boolean
  /**
   * The HTTP framing itself is broken (a body cut short): Node's HTTP parser
   * refuses it with a bare 400 before or while the API reads it, and the
   * client is gone anyway. Only the status and the absence of writes count.
   */
  readonly brokenFraming?: boolean
}

const pathOf = (e: Endpoint, params: Params, raw: boolean) =>
  e.path.replace(/:(\w+)/g, (_, name: string) => {
    const value = params[name]
    if (value === undefined) throw new Error(`${e.id}: no value for path parameter ${name}; add one to the context`)
    return raw ? value : encodeURIComponent(value)
  })

const encodeBody = (kind: ReturnType<typeof bodyKind>, payload: unknown): { body?: string | Uint8Array; type?: string } => {
  switch (kind) {
    case "json":
      return { body: JSON.stringify(payload ?? {}), type: "application/json" }
    case "form": {
      const fields = typeof payload === "object" && payload !== null ? payload as Record<string, unknown> : { value: payload }
      const form = new URLSearchParams()
      for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, typeof v === "string" ? v : JSON.stringify(v))
      return { body: form.toString(), type: "application/x-www-form-urlencoded" }
    }
    case "bytes":
      return { body: typeof payload === "string" ? payload : "hello", type: "application/octet-stream" }
    case "none":
      return payload === undefined ? {} : { body: JSON.stringify(payload), type: "application/json" }
  }
}

const toCall = (e: Endpoint, c: Context, input: Input): Call => {
  const params = { ...c.params, ...input.params }
  const query = input.query ?? validQuery(e.id, c)
  const search = typeof query === "string" ? query : new URLSearchParams(query).toString()
  const kind = bodyKind(e)
  const encoded = input.body !== undefined
    ? { body: input.body, type: kind === "form" ? "application/x-www-form-urlencoded" : "application/json" }
    : encodeBody(kind, input.payload ?? validPayload(e.id, c))
  const headers: Record<string, string> = { ...bearer(c.token) }
  // The page and session routes read the browser session rather than the bearer token.
  if (e.id === "oauth.deviceDecision" || e.id === "oauth.devicePage" || e.id.startsWith("session.")) {
    headers["cookie"] = c.session.cookie
    headers["x-csrf-token"] = c.session.csrf
  }
  if (encoded.type !== undefined && !input.noContentType) headers["content-type"] = encoded.type
  // An MCP client accepts JSON or an event stream; the protocol's transport refuses (406) a client that does not.
  if (isMcpRpc(e)) headers["accept"] = "application/json, text/event-stream"
  return {
    method: e.method,
    path: pathOf(e, params, input.rawParams ?? false) + (search === "" ? "" : `?${search}`),
    headers: { ...headers, ...input.headers },
    ...(encoded.body === undefined ? {} : { body: encoded.body }),
    ...(input.declaredLength === undefined ? {} : { declaredLength: input.declaredLength })
  }
}

// ---------------------------------------------------------------------------
// Inputs from the route's schemas

/** Values that pass a schema, encoded as they travel; or, when the schema has no arbitrary, nothing. */
const encodedValues = (schema: Schema.Schema.Any): fc.Arbitrary<unknown> | undefined => {
  try {
    const arbitrary = Arbitrary.make(schema as Schema.Schema<unknown, unknown>)
    const encode = Schema.encodeSync(schema as Schema.Schema<unknown, unknown>)
    return arbitrary.map((value) => {
      try {
        return encode(value)
      } catch {
        return value
      }
    })
  } catch {
    return undefined
  }
}

/** Values of the schema's wire structure, ignoring its refinements (patterns, lengths, ranges). */
const structuralValues = (schema: Schema.Schema.Any): fc.Arbitrary<unknown> | undefined => {
  try {
    return Arbitrary.make(Schema.encodedSchema(schema as Schema.Schema<unknown, unknown>))
  } catch {
    return undefined
  }
}

const fromSchema = (schema: Option.Option<Schema.Schema.Any>): fc.Arbitrary<unknown> | undefined => {
  if (Option.isNone(schema)) return undefined
  const candidates = [encodedValues(schema.value), structuralValues(schema.value)].filter((a) => a !== undefined)
  return candidates.length === 0 ? undefined : fc.oneof(...candidates)
}

const asParams = (value: unknown): Params =>
  Object.fromEntries(
    Object.entries(typeof value === "object" && value !== null ? value : {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)])
  )

/** Generated inputs: the route's path, query and body schemas, each part varied or left valid. */
const generated = (e: Endpoint): fc.Arbitrary<Input> => {
  const path = fromSchema(e.endpoint.pathSchema)
  const query = fromSchema(e.endpoint.urlParamsSchema)
  const payload = bodyKind(e) === "json" || bodyKind(e) === "form" ? fromSchema(e.endpoint.payloadSchema) : undefined
  const optional = <A>(arbitrary: fc.Arbitrary<A> | undefined) =>
    arbitrary === undefined ? fc.constant(undefined) : fc.option(arbitrary, { nil: undefined, freq: 2 })
  return fc.record({
    params: optional(path?.map(asParams)),
    query: optional(query?.map(asParams)),
    payload: optional(payload)
  }).map((parts) => ({
    label: "generated",
    ...(parts.params === undefined ? {} : { params: parts.params }),
    ...(parts.query === undefined ? {} : { query: parts.query }),
    ...(parts.payload === undefined ? {} : { payload: parts.payload })
  }))
}

// ---------------------------------------------------------------------------
// Hostile variants of a valid request

const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const deepObject = (depth: number) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

/** The valid body with each top-level field replaced by a value of another type. */
const wrongTypes = (valid: unknown): Array<unknown> => {
  const others: Array<unknown> = [123, -1.5, true, null, [], {}, ["x"], { nested: "x" }, "string"]
  const fields = typeof valid === "object" && valid !== null && !Array.isArray(valid) ? Object.keys(valid) : []
  return [
    [],
    "just a string",
    42,
    null,
    ...fields.flatMap((field) => others.map((other) => ({ ...(valid as object), [field]: other })))
  ]
}

/**
 * The valid body with one text at a time holding a NUL (U+0000), at any depth: no
 * storage may answer it differently (PostgreSQL's text cannot hold one).
 */
const withNul = (valid: unknown): Array<{ readonly at: string; readonly payload: unknown }> => {
  const found: Array<{ at: string; payload: unknown }> = []
  const walk = (value: unknown, at: string, put: (v: unknown) => unknown) => {
    if (typeof value === "string") found.push({ at, payload: put(`${value}\u0000x`) })
    else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${at}[${i}]`, (v) => put(value.map((x, j) => j === i ? v : x))))
    else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, `${at}.${key}`, (v) => put({ ...value, [key]: v }))
    }
  }
  walk(valid, "body", (v) => v)
  return found
}

/** Optional text fields of a route's body, for the NUL variants (the valid body leaves them out). */
const optionalTexts = (id: string, c: Context): Record<string, unknown> => {
  switch (id) {
    case "chat.send":
      return { attachments: [{ key: c.params["fileKey"] }], client_message_id: "m-1", concurrent_send: "queue" }
    case "oauth.deviceCode":
      return { scope: "read" }
    case "oauth.token":
      return { client_id: "cli" }
    case "oauth.revoke":
      return { token_type_hint: "access_token", client_id: "cli" }
    case "oauth.deviceSession":
      return { user_code: c.userCode }
    default:
      return {}
  }
}

const traversals = ["..", "../..", "..%2F..%2Fetc%2Fpasswd", "%2e%2e%2f%2e%2e%2f", "a%00b", "%FF%FE", "..%5C..%5Cwindows", "%2Fetc%2Fpasswd", "%252e%252e%252f"]

const hostile = (e: Endpoint, c: Context): Array<Input> => {
  const kind = bodyKind(e)
  const valid = validPayload(e.id, c)
  const inputs: Array<Input> = []
  const params = Object.keys(c.params).filter((p) => new RegExp(`:${p}(/|$)`).test(e.path))

  // Path traversal and invalid percent-encoding in every path parameter, sent as they are.
  for (const param of params) {
    for (const value of traversals) inputs.push({ label: `path ${param}=${value}`, params: { [param]: value }, rawParams: true })
    inputs.push({ label: `path ${param} header injection`, params: { [param]: "x%0D%0AX-Injected:%201" }, rawParams: true })
    inputs.push({ label: `path ${param} huge`, params: { [param]: "a".repeat(10_000) } })
  }

  // Query strings: injection, invalid encoding, repeats, huge values.
  const query = validQuery(e.id, c)
  const baseQuery = new URLSearchParams(query).toString()
  for (const extra of ["x=%0D%0AX-Injected:%201", "x=%FF%FE", `account=${c.account}&account=other`, `q=${"a".repeat(8_000)}`, "limit=-1&offset=1e9", "last_event_id=%00", "q=a%00b", "user_code=AB%00", "start_time=%00", "status=ok%00"]) {
    inputs.push({ label: `query ${extra.slice(0, 30)}`, query: baseQuery === "" ? extra : `${baseQuery}&${extra}` })
  }

  // Headers: injection attempts that survive HTTP framing, odd credentials, odd resume ids.
  inputs.push({ label: "header obs-text", headers: { "last-event-id": "\u00ff\u00fe", "x-csrf-token": "\u00ff" } })
  inputs.push({ label: "header forwarded host", headers: { "x-forwarded-host": "evil.example\">", "x-forwarded-proto": "javascript" } })
  inputs.push({ label: "header malformed bearer", headers: { authorization: `Bearer ${c.token} extra` } })
  inputs.push({ label: "header basic credential", headers: { authorization: "Basic dXNlcjpwYXNz" } })
  inputs.push({ label: "header huge token", headers: { authorization: `Bearer ${"t".repeat(6000)}` } })
  inputs.push({ label: "header last-event-id huge", headers: { "last-event-id": "9".repeat(500) } })
  inputs.push({ label: "header cookie garbage", headers: { cookie: "hosting_session=%FF%00; hosting_session=x" } })

  if (kind === "json" || kind === "form" || kind === "none") {
    // A NUL in each text of the body, optional ones included.
    const full = typeof valid === "object" && valid !== null && !Array.isArray(valid) ? { ...valid, ...optionalTexts(e.id, c) } : valid
    for (const { at, payload } of withNul(full)) inputs.push({ label: `NUL in ${at}`, payload })
    // Wrong types, top-level and per field.
    for (const payload of wrongTypes(valid)) inputs.push({ label: `wrong type ${JSON.stringify(payload).slice(0, 40)}`, payload })
    // Huge strings: under the body limit but over every field's limit, then over the body limit.
    const fields = typeof valid === "object" && valid !== null ? Object.keys(valid) : ["field"]
    for (const field of fields) inputs.push({ label: `huge ${field}`, payload: { ...(valid as object), [field]: "x".repeat(300_000) } })
    inputs.push({ label: "body over the limit", payload: { ...(valid as object), padding: "x".repeat(3 * 1024 * 1024) } })
    // Deep nesting, as the whole body and inside a field.
    inputs.push({ label: "deep array body", body: deepArray(200_000) })
    inputs.push({ label: "deep object body", body: deepObject(50_000) })
    for (const field of fields) {
      inputs.push({ label: `deep ${field}`, body: JSON.stringify({ ...(valid as object), [field]: "\u0000deep" }).replace("\"\\u0000deep\"", deepObject(5_000)) })
    }
    // Invalid UTF-8 inside a string value, and as the whole body.
    const text = kind === "form" ? new URLSearchParams(asParams(valid)).toString() : JSON.stringify(valid ?? {})
    const bytes = new TextEncoder().encode(text)
    const at = text.indexOf("\"", text.indexOf(":") + 1) + 1
    inputs.push({ label: "invalid utf-8 in a value", body: at > 0 ? new Uint8Array([...bytes.slice(0, at), 0xc3, 0x28, 0xff, 0xfe, ...bytes.slice(at)]) : new Uint8Array([0xff, 0xfe, ...bytes]) })
    inputs.push({ label: "invalid utf-8 body", body: new Uint8Array([0xff, 0xfe, 0xfd, 0x80, 0x00]) })
    if (kind === "form") inputs.push({ label: "invalid percent-encoding in a form", body: "token=%FF%FE&user_code=%E0%A4%A" })
    // Wrong content types for the body.
    for (const type of ["text/plain", "application/xml", "multipart/form-data; boundary=x", "application/json; charset=latin1", kind === "form" ? "application/json" : "application/x-www-form-urlencoded"]) {
      inputs.push({ label: `content type ${type}`, body: text, headers: { "content-type": type } })
    }
    inputs.push({ label: "no content type", body: text, noContentType: true })
    // Truncated and empty bodies.
    inputs.push({
      label: "truncated body",
      body: text.slice(0, Math.max(1, Math.floor(text.length / 2))),
      declaredLength: text.length + 100,
      brokenFraming: true
    })
    inputs.push({ label: "empty body", body: "" })
  }
  if (kind === "bytes") {
    inputs.push({ label: "upload beyond the reserved size", body: "x".repeat(10_000) })
    inputs.push({ label: "truncated upload", body: "he", declaredLength: 5, brokenFraming: true })
    inputs.push({ label: "upload as JSON", body: "{\"a\":1}", headers: { "content-type": "application/json" } })
  }
  return inputs
}

// ---------------------------------------------------------------------------
// The properties

/** What is wrong with one answer. */
const problemsOf = (e: Endpoint, input: Input, call: Call, answer: Answer, written: ReadonlyArray<string>) => {
  const target = input.label === "generated" ? ` ${call.method} ${call.path.slice(0, 200)}` : ""
  const where = `${e.id} [${input.label}]${target} -> ${answer.status}`
  const problems: Array<string> = []
  if (answer.status >= 500) problems.push(`${where}: a server error: ${answer.text.slice(0, 200)}`)
  if (input.brokenFraming && answer.status === 400 && answer.headers["content-type"] === undefined) {
    return written.length > 0 ? [`${where}: a refused request wrote ${written.join(", ")}`] : []
  }
  if (answer.status >= 400) {
    const isPage = (answer.headers["content-type"] ?? "").startsWith("text/html") && e.id.startsWith("oauth.device")
    // The MCP routes answer what their transport refuses as the protocol does, a JSON-RPC error (the document says so).
    const isProtocolError = isMcpRpc(e) && typeof (answer.json as any)?.error?.code === "number" && (answer.json as any)?.jsonrpc === "2.0"
    if (!isPage && !isProtocolError) problems.push(...errorBodyProblems(answer).map((p) => `${where}: ${p}`))
    if (written.length > 0) problems.push(`${where}: a refused request wrote ${written.join(", ")}`)
  }
  // A NUL is refused alike on every storage (PostgreSQL could not store it, SQLite could), naming the field.
  // (The MCP routes store nothing of the JSON-RPC envelope: a NUL there is the protocol's error; one in a tool's text is -32602.)
  if (input.label.startsWith("NUL in ") && !isMcpRpc(e)) {
    const field = input.label.slice("NUL in ".length).split(".").at(-1)!.replace(/\[\d+\]$/, "")
    const named = (answer.headers["content-type"] ?? "").startsWith("text/html") || answer.text.includes(field)
    if (answer.status !== 400 || !named) problems.push(`${where}: a NUL in ${field} must be 400 naming it: ${answer.text.slice(0, 200)}`)
  }
  if (Object.keys(answer.headers).some((h) => h.startsWith("x-injected"))) problems.push(`${where}: a header was injected`)
  // A path that no longer names the route (a traversal that worked, or empty segments: `/agents//` is the
  // list) is answered by the router or another route, not by the operation.
  const emptySegment = Object.values(input.params ?? {}).some((value) => value === "")
  const routed = !emptySegment && !(answer.status === 404 && (answer.json as { error?: string } | undefined)?.error === "not_found")
  if (routed) problems.push(...conformanceProblems(e, answer).map((p) => `${where}: ${p}`))
  return problems
}

const check = (e: Endpoint, c: Context, input: Input) =>
  Effect.gen(function*() {
    const call = toCall(e, c, input)
    const result = yield* Effect.either(trySend(call, 5_000))
    if (result._tag === "Left") return [`${e.id} [${input.label}]: no answer (${String(result.left.error)})`]
    const answer = result.right
    const written = answer.status >= 400 ? yield* writesOf(answer.request) : []
    return problemsOf(e, input, call, answer, written)
  })

/**
 * Generated inputs per route: 100 by default (what CI runs), more with
 * `HOSTING_FUZZ_RUNS` for a long run. The seed is new on every run and named
 * in every failure; `HOSTING_FUZZ_SEED` repeats a run.
 */
const numRuns = Number(process.env["HOSTING_FUZZ_RUNS"] ?? 100)
const seed = Number(process.env["HOSTING_FUZZ_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
/** Requests in flight at once, per route. */
const concurrency = 8

/**
 * The properties of every route, on the API over `storage` (in memory when
 * absent). A test file runs one storage (one `it.layer` per file).
 */
export const run = (name: string, storage?: Layer.Layer<Ports.StoragePorts>) =>
  describe(`HTTP on ${name} storage: every route under generated and hostile input (HOSTING_FUZZ_SEED=${seed})`, () => {
    withLayer(layer({ echo: { delay: 0 }, ...(storage === undefined ? {} : { storageLayer: storage }) }), { excludeTestServices: true })((it) => {
      it.effect("the write journal holds what a request wrote, and nothing for a refused one", () =>
        Effect.gen(function*() {
          const c = yield* contextFor
          const register = endpointById("agents.register")
          const stored = yield* trySend(toCall(register, c, { label: "valid" }))
          expect(stored.status).toBe(201)
          expect(yield* writesOf(stored.request)).toContain("AgentStore.upsertBuild")
          const refused = yield* trySend(toCall(register, c, { label: "no fields", payload: {} }))
          expect(refused.status).toBe(400)
          expect(yield* writesOf(refused.request)).toEqual([])
        }))

      for (const e of endpoints) {
        it.effect(`${e.id}: no 5xx, errors are { error, details }, answers match the document, refusals write nothing`, () =>
          Effect.gen(function*() {
            const c = yield* contextFor
            // The generated inputs are drawn from the seed up front (no shrinking: the first failures say enough),
            // so that requests can go several at a time.
            const inputs = [...hostile(e, c), ...fc.sample(generated(e), { numRuns, seed })]
            const found = yield* Effect.forEach(inputs, (input) => check(e, c, input), { concurrency })
            // A few problems are enough: later ones mostly repeat them.
            expect(found.flat().slice(0, 6), `HOSTING_FUZZ_SEED=${seed} repeats this run`).toEqual([])
          }), 60_000 + numRuns * 500)
      }
    })
  })
