/**
 * The Node server on its own, with small apps: what it answers while no app
 * is attached, what Node's parser refuses, bodies past their limit, pushed
 * bodies, streamed bodies, pre-response handlers and the end of a stop.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { describe, expect, it } from "@effect/vitest"
import { NodeRequest, NodeServer } from "@hosting/http-node"
import { Chunk, Effect, Exit, Layer, Option, Scope, Stream } from "effect"
import { type ClientRequest, request as httpRequest, type ServerResponse } from "node:http"
import { connect } from "node:net"

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
}

/** One request on a connection of its own; fails when no answer comes within two seconds. */
const call = (port: number, method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  Effect.async<Answer, Error>((resume) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method, headers, agent: false, timeout: 2000 }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (text += chunk))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, text })))
    })
    req.on("timeout", () => req.destroy(new Error(`no answer to ${method} ${path} in time`)))
    req.on("error", (error) => resume(Effect.fail(error)))
    req.end(body)
  })

/** Bytes written on a raw connection, and everything the server sent back until it closed (two seconds at most). */
const rawExchange = (port: number, bytes: string) =>
  Effect.async<string>((resume) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes))
    let text = ""
    const timer = setTimeout(() => socket.destroy(), 2000)
    socket.setEncoding("utf8")
    socket.on("data", (chunk) => (text += chunk))
    socket.on("close", () => {
      clearTimeout(timer)
      resume(Effect.succeed(text))
    })
    socket.on("error", () => undefined)
  })

const portOf = Effect.map(HttpServer.HttpServer, (server) => (server.address._tag === "TcpAddress" ? server.address.port : 0))

const echoApp = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  if (request.method === "POST") {
    const text = yield* HttpServerRequest.withMaxBodySize(request.text, Option.some(16))
    return HttpServerResponse.text(`read ${text}`)
  }
  return HttpServerResponse.unsafeJson({ from: "app", url: request.url })
}).pipe(Effect.catchAll((error) => Effect.succeed(HttpServerResponse.text(String(error.cause), { status: 413 }))))

describe("NodeServer", () => {
  it.scoped("answers while no app is attached: 503 starting before, the app while attached, 503 stopping after; /healthz 200 throughout", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      const port = yield* Effect.provide(portOf, context)
      const node = yield* Effect.provide(NodeServer.NodeServer, context)
      expect(node.serving()).toBe(false)
      const starting = yield* call(port, "GET", "/api/v1/agents")
      expect(starting.status).toBe(503)
      expect(JSON.parse(starting.text)).toMatchObject({ error: "starting" })
      expect(starting.headers["retry-after"]).toBe("1")
      expect((yield* call(port, "GET", "/healthz")).status).toBe(200)

      const serving = yield* Scope.make()
      yield* Layer.buildWithScope(HttpServer.serve(echoApp), serving).pipe(Effect.provide(context))
      expect(node.serving()).toBe(true)
      const served = yield* call(port, "GET", "/api/v1/agents?x=1")
      expect(JSON.parse(served.text)).toEqual({ from: "app", url: "/api/v1/agents?x=1" })

      yield* Scope.close(serving, Exit.void)
      expect(node.serving()).toBe(false)
      const stopping = yield* call(port, "GET", "/api/v1/agents")
      expect(stopping.status).toBe(503)
      expect(JSON.parse(stopping.text)).toMatchObject({ error: "stopping" })
      expect((yield* call(port, "GET", "/healthz?probe=1")).status).toBe(200)
    }))

  it.scoped("the unavailable body and the live path are the caller's", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeServer.layer({
        port: 0,
        host: "127.0.0.1",
        livePath: "/alive",
        unavailable: (phase) => ({ error: phase, details: "custom" })
      }))
      const port = yield* Effect.provide(portOf, context)
      expect(JSON.parse((yield* call(port, "GET", "/api")).text)).toEqual({ error: "starting", details: "custom" })
      expect((yield* call(port, "GET", "/alive")).status).toBe(200)
      expect((yield* call(port, "GET", "/healthz")).status).toBe(503)
    }))

  it.scoped("what Node's parser refuses gets the { error, details } body: bad HTTP 400, oversize headers 431, late headers 408", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1", headersTimeoutMs: 300, requestTimeoutMs: 600 }))
      yield* Layer.buildWithScope(HttpServer.serve(echoApp), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      const bad = yield* rawExchange(port, "NOT HTTP\r\n\r\n")
      expect(bad).toMatch(/^HTTP\/1\.1 400 /)
      expect(bad).toContain(`"error":"invalid_request"`)
      const big = yield* rawExchange(port, `GET / HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`)
      expect(big).toMatch(/^HTTP\/1\.1 431 /)
      expect(big).toContain(`"error":"headers_too_large"`)
      const late = yield* rawExchange(port, "GET / HTTP/1.1\r\nhost: x\r\n")
      expect(late).toMatch(/^HTTP\/1\.1 408 /)
      expect(late).toContain("headers within 300 ms, the whole request within 600 ms.")
    }))

  it.scoped("a body past its limit is refused with the platform's cause, and the rest is read so that the client gets the answer", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      yield* Layer.buildWithScope(HttpServer.serve(echoApp), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      expect((yield* call(port, "POST", "/", "small")).text).toBe("read small")
      const large = yield* call(port, "POST", "/", "x".repeat(200_000))
      expect(large.status).toBe(413)
      expect(large.text).toContain("maxBytes exceeded")
    }))

  it.scoped("a pushed body is fed by its source into the socket, after what was pushed before; its scope closes with the connection", () =>
    Effect.gen(function*() {
      let released = false
      let push: ((text: string) => boolean) | undefined
      const app = Effect.gen(function*() {
        yield* Effect.addFinalizer(() => Effect.sync(() => void (released = true)))
        const stream = Stream.make("never run")
        const pending = ["first\n"]
        Object.defineProperty(stream, NodeServer.pushSourceKey, {
          value: {
            attach: (sink: { write: (chunk: string) => boolean; end: () => void }) => {
              for (const text of pending) sink.write(text)
              push = (text) => {
                if (text === "end") sink.end()
                return text === "end" || sink.write(text)
              }
              return { resume: () => undefined }
            }
          }
        })
        return HttpServerResponse.stream(stream as unknown as Stream.Stream<Uint8Array>, { contentType: "text/event-stream" })
      })
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      yield* Layer.buildWithScope(HttpServer.serve(app), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      const answer = yield* Effect.fork(call(port, "GET", "/events"))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      expect(released).toBe(false)
      push!("second\n")
      push!("end")
      const done = yield* answer.await
      expect(Exit.isSuccess(done) && done.value.text).toBe("first\nsecond\n")
      expect(Exit.isSuccess(done) && done.value.headers["content-type"]).toBe("text/event-stream")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      expect(released).toBe(true)
    }))

  it.scoped("a pushed stream whose connection closed leaves nothing on its response, and a stop ends only the streams still open", () =>
    Effect.gen(function*() {
      const responses: Array<ServerResponse> = []
      const stopped: Array<string> = []
      const app = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (request instanceof NodeRequest.NodeRequest) responses.push(request.response)
        const name = request.url
        const stream = Stream.make("never run")
        Object.defineProperty(stream, NodeServer.pushSourceKey, {
          value: {
            attach: (sink: { write: (chunk: string) => boolean; end: () => void }) => {
              sink.write(`${name}\n`)
              return { resume: () => undefined }
            },
            stop: () => void stopped.push(name)
          }
        })
        return HttpServerResponse.stream(stream as unknown as Stream.Stream<Uint8Array>, { contentType: "text/event-stream" })
      })
      const serverScope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(NodeServer.layer({ port: 0, host: "127.0.0.1", shutdownGraceMs: 100 }), serverScope)
      yield* Layer.buildWithScope(HttpServer.serve(app), serverScope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      /** Opens a stream and waits for its first line; gives the request to destroy. */
      const open = (path: string) =>
        Effect.async<ClientRequest>((resume) => {
          const req = httpRequest({ host: "127.0.0.1", port, path, agent: false }, (response) => {
            response.once("data", () => resume(Effect.succeed(req)))
          })
          req.on("error", () => undefined)
          req.end()
        })
      const left = yield* open("/left")
      yield* open("/stays")
      left.destroy()
      const closed = responses[0]!
      yield* Effect.promise(() => new Promise((resolve) => closed.once("close", resolve)))
      expect(closed.listenerCount("drain")).toBe(0)
      expect(responses[1]!.listenerCount("drain")).toBe(1)
      yield* Scope.close(serverScope, Exit.void)
      expect(stopped).toEqual(["/stays"])
    }))

  it.scoped("a client that leaves mid-request interrupts what the app made interruptible, and the request's scope closes (its finalizers run)", () =>
    Effect.gen(function*() {
      let started = false
      let interrupted = false
      let released = false
      const app = Effect.gen(function*() {
        yield* Effect.addFinalizer(() => Effect.sync(() => void (released = true)))
        started = true
        return yield* Effect.interruptible(Effect.never)
      }).pipe(Effect.onInterrupt(() => Effect.sync(() => void (interrupted = true))))
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      yield* Layer.buildWithScope(HttpServer.serve(app), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      const socket = connect(port, "127.0.0.1", () => socket.write("GET /slow HTTP/1.1\r\nhost: x\r\n\r\n"))
      socket.on("error", () => undefined)
      for (let i = 0; i < 100 && !started; i++) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      expect(started).toBe(true)
      socket.destroy()
      for (let i = 0; i < 100 && !released; i++) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      expect(interrupted).toBe(true)
      expect(released).toBe(true)
    }))

  it.scoped("a stream body without a push source is run and written; a HEAD request gets the head alone", () =>
    Effect.gen(function*() {
      const bytes = new TextEncoder()
      const app = Effect.succeed(HttpServerResponse.stream(
        Stream.fromChunk(Chunk.make(bytes.encode("a"), bytes.encode("b"), bytes.encode("c"))),
        { contentType: "text/plain" }
      ))
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      yield* Layer.buildWithScope(HttpServer.serve(app), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      expect((yield* call(port, "GET", "/")).text).toBe("abc")
      const head = yield* call(port, "HEAD", "/")
      expect(head.status).toBe(200)
      expect(head.text).toBe("")
    }))

  it.scoped("the pre-response handlers an app registers (the platform's CORS middleware) shape its answer, a failure's too", () =>
    Effect.gen(function*() {
      const tagged = HttpApp.appendPreResponseHandler((_, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "x-handled", String(response.status))))
      const app = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* tagged
        if (request.url === "/fails") return yield* Effect.fail(new Error("refused"))
        return HttpServerResponse.text("ok")
      })
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      yield* Layer.buildWithScope(HttpServer.serve(app, HttpMiddleware.cors()), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      const ok = yield* call(port, "GET", "/", undefined, { origin: "https://elsewhere.example" })
      expect([ok.status, ok.text, ok.headers["x-handled"], ok.headers["access-control-allow-origin"]]).toEqual([200, "ok", "200", "*"])
      const failed = yield* call(port, "GET", "/fails")
      expect([failed.status, failed.headers["x-handled"], failed.headers["access-control-allow-origin"]]).toEqual([500, "500", "*"])
    }))

  it.scoped("a pre-response handler that throws is a defect of the answer: the request is answered 500, shaped by the handlers", () =>
    Effect.gen(function*() {
      const throwing = HttpApp.appendPreResponseHandler((_, response) => {
        if (response.status === 200) throw new Error("handler broke")
        return Effect.succeed(HttpServerResponse.setHeader(response, "x-handled", String(response.status)))
      })
      const app = Effect.zipRight(throwing, Effect.succeed(HttpServerResponse.text("ok")))
      const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
      yield* Layer.buildWithScope(HttpServer.serve(app), yield* Effect.scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      const answered = yield* call(port, "GET", "/")
      expect([answered.status, answered.headers["x-handled"]]).toEqual([500, "500"])
    }))

  it.scoped("with a tracer on, each request gets the platform's server span, a traceparent continued, skipped where told; with it off, none", () =>
    Effect.gen(function*() {
      const app = Effect.map(Effect.option(Effect.currentSpan), (span) =>
        HttpServerResponse.unsafeJson(Option.match(span, {
          onNone: () => null,
          onSome: (span) => ({ name: span.name, traceId: span.traceId, parent: Option.getOrNull(Option.map(span.parent, (p) => p.spanId)) })
        })))
      const serving = (tracerEnabled: boolean) =>
        Effect.gen(function*() {
          const context = yield* Layer.build(NodeServer.layer({ port: 0, host: "127.0.0.1" }))
          const served = HttpServer.serve(app).pipe(HttpMiddleware.withTracerDisabledWhen((request) => request.url === "/healthz"))
          yield* Layer.buildWithScope(served, yield* Effect.scope).pipe(Effect.provide(context), Effect.withTracerEnabled(tracerEnabled))
          return yield* Effect.provide(portOf, context)
        })
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
      const on = yield* serving(true)
      const continued = JSON.parse((yield* call(on, "GET", "/chat", undefined, { traceparent })).text)
      expect(continued).toEqual({ name: "http.server GET", traceId: "4bf92f3577b34da6a3ce929d0e0e4736", parent: "00f067aa0ba902b7" })
      const fresh = JSON.parse((yield* call(on, "GET", "/chat")).text)
      expect([fresh.name, fresh.parent]).toEqual(["http.server GET", null])
      expect(fresh.traceId).toMatch(/^[0-9a-f]{32}$/)
      expect(JSON.parse((yield* call(on, "GET", "/healthz", undefined, { traceparent })).text)).toBeNull()
      const off = yield* serving(false)
      expect(JSON.parse((yield* call(off, "GET", "/chat", undefined, { traceparent })).text)).toBeNull()
    }))

  it.scoped("a stop closes idle kept-alive connections at once and cuts the others after the grace period", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(NodeServer.layer({ port: 0, host: "127.0.0.1", shutdownGraceMs: 200 }), scope)
      const hang = Effect.never.pipe(Effect.as(HttpServerResponse.empty()))
      yield* Layer.buildWithScope(HttpServer.serve(hang), scope).pipe(Effect.provide(context))
      const port = yield* Effect.provide(portOf, context)
      const pending = yield* Effect.fork(Effect.either(call(port, "GET", "/hang")))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      const started = Date.now()
      yield* Scope.close(scope, Exit.void)
      expect(Date.now() - started).toBeLessThan(1500)
      const outcome = yield* pending.await
      expect(Exit.isSuccess(outcome)).toBe(true)
    }))
})
