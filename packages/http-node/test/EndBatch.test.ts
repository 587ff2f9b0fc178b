/**
 * Answers whose body is in hand are ended together at the end of the event
 * loop's turn, in their order, each with its own body; a batch is bounded in
 * size and in time, one response that cannot end does not hold the others,
 * answers that wait are written before a broken connection is cut, and a stopping
 * server writes what waits before closing connections.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { NodeServer } from "@hosting/http-node"
import { Context, Effect, Layer } from "effect"
import type { ServerResponse } from "node:http"
import { request as httpRequest } from "node:http"
import { Duplex } from "node:stream"
import { afterEach, describe, expect, it, vi } from "vitest"
import * as EndBatch from "../src/internal/endBatch.js"

/** Responses that note when and with what they were ended. */
const responses = (count: number, ended: Array<string>) =>
  Array.from({ length: count }, (_, i) => ({
    end: (body?: unknown) => void ended.push(`${i}:${body === undefined ? "-" : String(body)}`)
  }) as unknown as ServerResponse)

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("EndBatch: answers ended together at the turn's end", () => {
  afterEach(() => {
    EndBatch.flush()
    vi.restoreAllMocks()
  })

  it("ends nothing while the turn runs, then every answer of the turn in its order, each with its body", async () => {
    const ended: Array<string> = []
    const [a, b, c] = responses(3, ended)
    EndBatch.endSoon(a!, "one")
    EndBatch.endSoon(b!)
    EndBatch.endSoon(c!, new TextEncoder().encode("3"))
    expect(ended).toEqual([])
    expect(EndBatch.waiting()).toBe(3)
    await nextTurn()
    expect(ended).toEqual(["0:one", "1:-", "2:51"])
    expect(EndBatch.waiting()).toBe(0)
  })

  it(`ends the batch at once when ${EndBatch.maxWaiting} answers wait, and the rest at the turn's end`, async () => {
    const ended: Array<string> = []
    const outs = responses(EndBatch.maxWaiting + 2, ended)
    outs.slice(0, EndBatch.maxWaiting - 1).forEach((out) => EndBatch.endSoon(out, "x"))
    expect(ended).toHaveLength(0)
    EndBatch.endSoon(outs[EndBatch.maxWaiting - 1]!, "x")
    expect(ended).toHaveLength(EndBatch.maxWaiting)
    outs.slice(EndBatch.maxWaiting).forEach((out) => EndBatch.endSoon(out, "y"))
    expect(ended).toHaveLength(EndBatch.maxWaiting)
    await nextTurn()
    expect(ended.slice(EndBatch.maxWaiting)).toEqual([`${EndBatch.maxWaiting}:y`, `${EndBatch.maxWaiting + 1}:y`])
  })

  it(`ends the batch when the next answer comes once the first has waited ${EndBatch.maxWaitMs} ms`, () => {
    let now = 1_000
    vi.spyOn(performance, "now").mockImplementation(() => now)
    const ended: Array<string> = []
    const [a, b, c] = responses(3, ended)
    EndBatch.endSoon(a!, "a")
    now += EndBatch.maxWaitMs - 0.5
    EndBatch.endSoon(b!, "b")
    expect(ended).toEqual([])
    now += 0.5
    EndBatch.endSoon(c!, "c")
    expect(ended).toEqual(["0:a", "1:b", "2:c"])
  })

  it("ends the others when one response throws as it ends", async () => {
    const ended: Array<string> = []
    const [a, c] = responses(2, ended)
    const broken = { end: () => { throw new Error("socket gone") } } as unknown as ServerResponse
    EndBatch.endSoon(a!, "a")
    EndBatch.endSoon(broken, "b")
    EndBatch.endSoon(c!, "c")
    await nextTurn()
    expect(ended).toEqual(["0:a", "1:c"])
  })

  it("flush ends what waits now", () => {
    const ended: Array<string> = []
    const [a] = responses(1, ended)
    EndBatch.endSoon(a!, "a")
    EndBatch.flush()
    expect(ended).toEqual(["0:a"])
  })
})

/** GET `path` on a connection of its own: the status and text of the answer. */
const get = (port: number, path: string, method = "GET") =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method, agent: false, timeout: 2000 }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on("timeout", () => req.destroy(new Error(`no answer to ${path}`)))
    req.on("error", reject)
    req.end()
  })

const app = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const url = request.url
  if (url.startsWith("/empty")) return HttpServerResponse.empty({ status: 204 })
  if (url.startsWith("/text")) return HttpServerResponse.text(`text of ${url}`)
  return HttpServerResponse.unsafeJson({ url })
})

/** Runs `body` with the app served on a free port of 127.0.0.1. */
const withServer = (body: (port: number, node: NodeServer.NodeServer["Type"]) => Effect.Effect<void>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(HttpServer.serve(app).pipe(Layer.provideMerge(NodeServer.layer({ port: 0, host: "127.0.0.1" }))))
    const server = Context.get(context, HttpServer.HttpServer)
    yield* body(server.address._tag === "TcpAddress" ? server.address.port : 0, Context.get(context, NodeServer.NodeServer))
  })))

describe("EndBatch on a Node server", () => {
  it("writes the answers that wait before it cuts a connection whose request broke", () =>
    withServer((_port, node) =>
      Effect.sync(() => {
        // As when a client's end cuts a body short right after the app answered, in the same turn.
        const events: Array<string> = []
        const out = { end: () => void events.push("answer written") } as unknown as ServerResponse
        EndBatch.endSoon(out, "answer")
        const socket = Object.assign(new Duplex({ read: () => undefined, write: (_c, _e, done) => done() }), {
          _httpMessage: { headersSent: true }
        })
        socket.destroy = () => {
          events.push("connection cut")
          return socket
        }
        const error = Object.assign(new Error("Parse Error: Invalid EOF state"), { code: "HPE_INVALID_EOF_STATE" })
        node.server.emit("clientError", error, socket)
        expect(events).toEqual(["answer written", "connection cut"])
      })
    ))

  it("writes the answers that wait when it stops, before it stops listening", async () => {
    const events: Array<string> = []
    await withServer((_port, node) =>
      Effect.sync(() => {
        const close = node.server.close.bind(node.server)
        node.server.close = (callback) => {
          events.push("server closed")
          return close(callback)
        }
        EndBatch.endSoon({ end: () => void events.push("answer written") } as unknown as ServerResponse)
      })
    )
    expect(events).toEqual(["answer written", "server closed"])
  })

  it("answers many requests at once, each with its own body, whatever kind it is", () =>
    withServer((port) => Effect.gen(function*() {
      const paths = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? `/json/${i}` : i % 3 === 1 ? `/text/${i}` : `/empty/${i}`))
      const answers = yield* Effect.promise(() => Promise.all(paths.map((path) => get(port, path))))
      answers.forEach((answer, i) => {
        const path = paths[i]!
        if (path.startsWith("/json")) expect(answer).toMatchObject({ status: 200, text: JSON.stringify({ url: path }) })
        else if (path.startsWith("/text")) expect(answer).toMatchObject({ status: 200, text: `text of ${path}` })
        else expect(answer).toMatchObject({ status: 204, text: "" })
      })
      const head = yield* Effect.promise(() => get(port, "/json/head", "HEAD"))
      expect(head).toMatchObject({ status: 200, text: "" })
    })))
})
