/**
 * The early send answers exactly as the routed send route does. One server
 * runs both ways: each case is sent once through the router and once with
 * the early send in front, each time on fresh data of its own (a new team
 * and deployment), and the two answers must match in status, headers and
 * body (ids and times compared by form). The cases cover every answer of the
 * send route: success, each refusal of the use case, the schema and JSON
 * errors, authentication, the rate limit, and the requests the early send
 * leaves to the router.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { HttpApiBuilder, type HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { EarlySend, HostingHttp } from "@hosting/http"
import { Seed, TestServices } from "@hosting/testing"
import { Effect, Layer } from "effect"
import { createServer, type IncomingMessage, request as httpRequest, type Server, type ServerResponse } from "node:http"
import { port } from "./HttpTestServer.js"

let server: Server | undefined
/** How the server answers sends now, and how many the early send took. */
let mode: "routed" | "early" = "routed"
let taken = 0

/** Puts the early send in front of the router while `mode` is "early" (as the example server does always). */
const hook = Layer.effectDiscard(Effect.gen(function*() {
  const early = yield* EarlySend.EarlySend
  const target = server!
  const emit = target.emit
  target.emit = function(this: Server, event: string | symbol, ...args: Array<unknown>) {
    if (event === "request" && mode === "early" && early.answer(args[0] as IncomingMessage, args[1] as ServerResponse)) {
      taken++
      return true
    }
    return (emit as (this: Server, event: string | symbol, ...args: Array<unknown>) => boolean).call(this, event, ...args)
  } as Server["emit"]
}))

const messageLimit = 2
const maxAttachments = 2
const perUser = 4

const layer = hook.pipe(
  Layer.provideMerge(HttpApiBuilder.serve()),
  Layer.provideMerge(HostingHttp.layer({
    maxBodyBytes: 256 * 1024,
    rateLimit: { perUser: { requests: perUser, seconds: 3600 }, perIp: { requests: 10_000, seconds: 3600 }, trustedProxies: 1 }
  })),
  Layer.provideMerge(TestServices.make({ messageLimit, maxAttachments, echo: { delay: "1 millis" } })),
  Layer.provideMerge(NodeHttpServer.layer(() => (server = createServer()), { port: 0, host: "127.0.0.1" }))
)

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** One raw request: exactly these headers (plus Host and Connection) and this body. */
const call = (path: string, headers: Record<string, string>, body?: string, method = "POST") =>
  Effect.flatMap(port, (p) =>
    Effect.async<Answer>((resume) => {
      const req = httpRequest({ host: "127.0.0.1", port: p, method, path: `/api/v1${path}`, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") })))
      })
      req.on("error", (error) => resume(Effect.die(error)))
      req.end(body)
    }))

/** The client address of the current run (as the trusted proxy in front says), so that each run has its own address bucket. */
let address = 0

/** A JSON body with its length declared. */
const json = (token: string | undefined, body: string, extra: Record<string, string> = {}) => ({
  headers: {
    "x-forwarded-for": `10.0.${address >> 8}.${address & 255}`,
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    ...extra
  },
  body
})

/** An answer with what differs by nature between two sends (the date, new ids and times) replaced by its form. */
const comparable = (answer: Answer) => {
  const { date: _date, ...headers } = answer.headers
  const body = answer.body
    .replace(/"msg-[0-9a-f-]{36}"/g, "\"<message id>\"")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uuid>")
    .replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"/g, "\"<time>\"")
  return { status: answer.status, headers, body }
}

const uuid = () => globalThis.crypto.randomUUID()
const messages = (deployment: string, conversation: string = uuid()) => `/deployments/${deployment}/messaging/conversations/${conversation}/messages`

interface Setup {
  readonly team: Seed.Team
  readonly deployment: string
}

/**
 * A case: what it sends, on data of its own. Every request but the last
 * prepares (their answers are compared too); the last is the one the case is about.
 */
type Case = (setup: Setup) => Effect.Effect<Array<Answer>, never, HttpServer.HttpServer>

/** Runs a case routed, then early, on fresh data each time; returns both runs' answers and how many the early send took. */
const both = (run: Case) =>
  Effect.gen(function*() {
    const results: Record<"routed" | "early", Array<Answer>> = { routed: [], early: [] }
    let early = 0
    for (const m of ["routed", "early"] as const) {
      const team = yield* Seed.team
      const { id } = yield* Seed.deployment(team)
      mode = m
      address++
      const before = taken
      // The run's own names read the same in both runs.
      results[m] = (yield* run({ team, deployment: id })).map((answer) => ({
        ...answer,
        body: answer.body.replaceAll(team.account, "<account>").replaceAll(id, "<deployment>")
      }))
      if (m === "early") early = taken - before
      mode = "routed"
    }
    expect(results.early.map(comparable)).toEqual(results.routed.map(comparable))
    return { answers: results.early, early }
  })

const send = (path: string, request: { headers: Record<string, string>; body: string }) => call(path, request.headers, request.body)

describe("the early send answers as the send route does", () => {
  withLayer(layer, { excludeTestServices: true })((it) => {
    it.effect("a send: 200 with the message id and time, and its reply is streamed and stored", () =>
      Effect.gen(function*() {
        const { answers, early } = yield* both(({ deployment, team }) =>
          Effect.gen(function*() {
            const path = messages(deployment)
            const sent = yield* send(path, json(team.tokens.member, JSON.stringify({ content: "hello there" })))
            // The history once the reply has ended (bounded: 5 s).
            const read = call(path, { authorization: `Bearer ${team.tokens.member}` }, undefined, "GET")
            let history = yield* read
            for (let i = 0; i < 250 && history.body.includes("\"streaming\""); i++) {
              yield* Effect.sleep("20 millis")
              history = yield* read
            }
            return [sent, history]
          }))
        expect(early).toBe(1)
        expect(answers[0]!.status).toBe(200)
        expect(JSON.parse(answers[0]!.body)).toMatchObject({ message_id: expect.stringMatching(/^msg-/) })
        expect(answers[0]!.headers["content-type"]).toBe("application/json")
        expect(JSON.parse(answers[1]!.body).messages.map((m: { content: string; status: string }) => [m.content, m.status])).toEqual([
          ["hello there", "complete"],
          ["hello there", "complete"]
        ])
      }))

    it.effect("refusals of the use case: unknown deployment, outsider, empty message, another's conversation, limit, attachments", () =>
      Effect.gen(function*() {
        const cases: Array<[string, Case, number]> = [
          ["unknown deployment", ({ team }) => Effect.all([send(messages("dep-unknown"), json(team.tokens.member, "{\"content\":\"hi\"}"))]), 404],
          ["outsider", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.outsider, "{\"content\":\"hi\"}"))]), 403],
          ["blank message", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, "{\"content\":\"   \"}"))]), 400],
          ["another member's conversation", ({ deployment, team }) => {
            const conversation = uuid()
            return Effect.all([
              send(messages(deployment, conversation), json(team.tokens.owner, "{\"content\":\"mine\"}")),
              send(messages(deployment, conversation), json(team.tokens.member, "{\"content\":\"yours?\"}"))
            ])
          }, 404],
          ["message limit", ({ deployment, team }) => {
            const conversation = uuid()
            const one = send(messages(deployment, conversation), json(team.tokens.member, "{\"content\":\"again\"}"))
            return Effect.all([one, one, one])
          }, 409],
          ["unknown attachment", ({ deployment, team }) =>
            Effect.all([send(messages(deployment), json(team.tokens.member, "{\"content\":\"see\",\"attachments\":[{\"key\":\"nope\"}]}"))]), 400],
          ["too many attachments", ({ deployment, team }) =>
            Effect.all([send(messages(deployment), json(team.tokens.member, JSON.stringify({ attachments: ["a", "b", "c"].map((key) => ({ key })) })))]), 413]
        ]
        for (const [name, run, status] of cases) {
          const { answers, early } = yield* both(run)
          expect([name, answers.at(-1)!.status]).toEqual([name, status])
          expect([name, JSON.parse(answers.at(-1)!.body)]).toEqual([name, expect.objectContaining({ error: expect.any(String), details: expect.any(String) })])
          expect([name, early]).toEqual([name, answers.length])
        }
      }))

    it.effect("bad input: path, JSON, nesting, schema; and a bad token: the same 4xx and body", () =>
      Effect.gen(function*() {
        const deep = "[".repeat(100) + "]".repeat(100)
        const cases: Array<[string, Case, number]> = [
          ["conversation id not a UUID v4", ({ deployment, team }) => Effect.all([send(messages(deployment, "not-a-uuid"), json(team.tokens.member, "{\"content\":\"hi\"}"))]), 400],
          ["invalid JSON", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, "{\"content\":"))]), 400],
          ["nested too deep", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, deep))]), 400],
          ["empty body", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, ""))]), 400],
          ["content of the wrong type", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, "{\"content\":5}"))]), 400],
          ["content too long", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, JSON.stringify({ content: "x".repeat(100_001) })))]), 400],
          ["unknown token", ({ deployment }) => Effect.all([send(messages(deployment), json("no-such-token", "{\"content\":\"hi\"}"))]), 401],
          // The token is checked before the path and the body.
          ["unknown token, bad path and body", ({ deployment }) => Effect.all([send(messages(deployment, "nope"), json("no-such-token", "{"))]), 401],
          ["bad path and body", ({ deployment, team }) => Effect.all([send(messages(deployment, "nope"), json(team.tokens.member, "{"))]), 400],
          ["no content type", ({ deployment, team }) => {
            const { "content-type": _, ...headers } = json(team.tokens.member, "{\"content\":\"untyped\"}").headers
            return Effect.all([call(messages(deployment), headers, "{\"content\":\"untyped\"}")])
          }, 200]
        ]
        for (const [name, run, status] of cases) {
          const { answers, early } = yield* both(run)
          expect([name, answers[0]!.status]).toEqual([name, status])
          expect([name, early]).toEqual([name, 1])
        }
      }))

    it.effect("the rate limit: the same RateLimit headers, and 429 once the user's bucket is empty", () =>
      Effect.gen(function*() {
        const { answers, early } = yield* both(({ deployment, team }) => {
          const one = Effect.suspend(() => send(messages(deployment), json(team.tokens.member, "{\"content\":\"hi\"}")))
          return Effect.all(Array.from({ length: perUser + 2 }, () => one))
        })
        expect(early).toBe(perUser + 2)
        // The first send of the token is charged to the member as well as to the address: four sends, then 429.
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429, 429])
        expect(answers.at(-1)!.headers["retry-after"]).toBeDefined()
        expect(answers[1]!.headers["ratelimit-remaining"]).toBe(String(perUser - 2))
      }))

    it.effect("a client that goes away before its answer leaves the server answering the next send", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const { id } = yield* Seed.deployment(team)
        mode = "early"
        const before = taken
        const p = yield* port
        // The whole request, then the connection cut at once.
        yield* Effect.async<void>((resume) => {
          const request = json(team.tokens.member, "{\"content\":\"gone\"}")
          const req = httpRequest({ host: "127.0.0.1", port: p, method: "POST", path: `/api/v1${messages(id)}`, headers: request.headers })
          req.on("error", () => resume(Effect.void))
          req.end(request.body, () => {
            req.destroy()
            resume(Effect.void)
          })
        })
        const next = yield* send(messages(id), json(team.tokens.member, "{\"content\":\"still here\"}"))
        mode = "routed"
        expect(next.status).toBe(200)
        // The cut request reached the early send too, unless the cut came before its headers were read.
        expect(taken - before).toBeGreaterThanOrEqual(1)
      }))

    it.effect("requests it does not take go to the router: other types, no or another credential, oversize or chunked bodies, escapes, queries", () =>
      Effect.gen(function*() {
        const cases: Array<[string, Case, number]> = [
          ["text body", ({ deployment, team }) => Effect.all([send(messages(deployment), json(team.tokens.member, "hello", { "content-type": "text/plain" }))]), 400],
          ["no credential", ({ deployment }) => Effect.all([send(messages(deployment), json(undefined, "{\"content\":\"hi\"}"))]), 401],
          ["basic credential", ({ deployment }) => Effect.all([send(messages(deployment), json(undefined, "{\"content\":\"hi\"}", { authorization: "Basic eDp5" }))]), 401],
          ["declared over the limit", ({ deployment, team }) => {
            const body = JSON.stringify({ content: "y".repeat(300 * 1024) })
            return Effect.all([send(messages(deployment), json(team.tokens.member, body))])
          }, 413],
          ["chunked", ({ deployment, team }) => {
            const { "content-length": _, ...headers } = json(team.tokens.member, "").headers
            return Effect.all([call(messages(deployment), { ...headers, "transfer-encoding": "chunked" }, "{\"content\":\"chunked\"}")])
          }, 200],
          ["escaped path", ({ deployment, team }) =>
            Effect.all([send(messages(deployment).replace("/messaging/", "/messaging/").replace(deployment, encodeURIComponent(deployment).replace("-", "%2D")), json(team.tokens.member, "{\"content\":\"hi\"}"))]), 200],
          ["query", ({ deployment, team }) => Effect.all([send(`${messages(deployment)}?x=1`, json(team.tokens.member, "{\"content\":\"hi\"}"))]), 200]
        ]
        for (const [name, run, status] of cases) {
          const { answers, early } = yield* both(run)
          expect([name, answers[0]!.status]).toEqual([name, status])
          expect([name, early]).toEqual([name, 0])
        }
      }))
  })
})
