/**
 * Request ids and access lines (issue 27): the id a request carries (its
 * own `X-Request-Id`, its `traceparent`'s trace id, or a new one) comes back
 * in `X-Request-Id`; with the access log on, each request writes one line
 * naming the method, the route's template, the status, the duration, the
 * bytes, the user and the request id, and never a token, a path's ids or a
 * query.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect, HashMap, Layer, List, Logger, type LogLevel } from "effect"
import { layer, port, raw } from "./HttpTestServer.js"

interface Line {
  readonly level: LogLevel.LogLevel
  readonly message: unknown
  readonly annotations: Record<string, unknown>
}

const lines: Array<Line> = []
const capture = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ annotations, logLevel, message }) => {
    lines.push({
      level: logLevel,
      message: List.isList(message) ? List.toArray(message)[0] : Array.isArray(message) ? message[0] : message,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
)

const accessLines = () => lines.filter((l) => l.message === "request").map((l) => l.annotations)

describe("HTTP: request ids and the access log", () => {
  withLayer(layer({ accessLog: true }).pipe(Layer.provide(capture)), { excludeTestServices: true })((it) => {
    it.effect("a request's own id comes back; else its trace id; else a new one; a malformed one is replaced", () =>
      Effect.gen(function*() {
        const own = yield* raw("GET", "/agents", { headers: { "x-request-id": "client-7f3a" } })
        expect(own.headers["x-request-id"]).toBe("client-7f3a")
        // Sent with fetch: the platform's client would put its own span's traceparent in.
        const traced = yield* Effect.flatMap(port, (p) =>
          Effect.promise(() =>
            fetch(`http://127.0.0.1:${p}/api/v1/agents`, {
              headers: { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" }
            })
          ))
        expect(traced.headers.get("x-request-id")).toBe("4bf92f3577b34da6a3ce929d0e0e4736")
        const made = yield* raw("GET", "/agents")
        expect(made.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/)
        const other = yield* raw("GET", "/agents")
        expect(other.headers["x-request-id"]).not.toBe(made.headers["x-request-id"])
        for (const bad of ["has spaces in it", "x".repeat(129), "semi;colon"]) {
          const replaced = yield* raw("GET", "/agents", { headers: { "x-request-id": bad } })
          expect(replaced.headers["x-request-id"]).toMatch(/^[0-9a-f]{32}$/)
        }
      }))

    it.effect("one access line per request: method, route template, status, duration, bytes, user, request id; no token or query", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        lines.length = 0
        const read = yield* raw("GET", `/accounts/${team.account}?secret=hunter2`, {
          token: team.tokens.owner,
          headers: { "x-request-id": "line-1" }
        })
        expect(read.status).toBe(200)
        const missing = yield* raw("GET", "/nothing/here", { headers: { "x-request-id": "line-2" } })
        expect(missing.status).toBe(404)
        const logged = accessLines()
        expect(logged).toHaveLength(2)
        const [first, second] = logged
        expect(first).toMatchObject({
          method: "GET",
          route: "/api/v1/accounts/:account",
          status: 200,
          user: team.principals.owner.user.id,
          request_id: "line-1"
        })
        expect(typeof first!["duration_ms"]).toBe("number")
        expect(first!["bytes"]).toBe(Buffer.byteLength(JSON.stringify(read.body)))
        expect(second).toMatchObject({ method: "GET", route: "-", status: 404, request_id: "line-2" })
        expect(second!["user"]).toBeUndefined()
        const text = JSON.stringify(lines)
        for (const secret of [team.tokens.owner, "hunter2", team.account]) expect(text).not.toContain(secret)
      }))
  })
})
