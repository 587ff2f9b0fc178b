/**
 * A fake agent: an HTTP server on 127.0.0.1 (a free port) that answers every
 * request with a scripted behaviour, records what it was sent and tells when
 * the connection that carried a request closes. It stops with its scope.
 */
import { AgentRuntime } from "@hosting/core"
import { AgentRuntimeSuite, EchoAgent } from "@hosting/testing"
import { Deferred, Effect, Layer, type Scope } from "effect"
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"

/** One request as the agent received it. */
export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: unknown
  /** The client's port: requests on one kept-alive connection share it. */
  readonly clientPort: number | undefined
}

/** What a script can do with the exchange it answers. */
export interface Exchange {
  readonly req: IncomingMessage
  readonly res: ServerResponse
  /** The request's body: parsed JSON, else its text. */
  readonly body: unknown
  /** Waits; never resolves once the agent has stopped, so a script cannot outlive its test. */
  readonly sleep: (millis: number) => Promise<void>
  /** Starts an SSE answer. */
  readonly startEvents: () => void
  /** Writes one SSE `data:` event (a JSON payload, or a raw string such as `[DONE]`). */
  readonly event: (data: unknown) => void
  /** Writes raw text, to split events and characters across writes. */
  readonly raw: (text: string | Uint8Array) => void
}

/** A running fake agent. */
export interface FakeAgent {
  readonly url: string
  readonly received: ReadonlyArray<Received>
  /**
   * Completes when the connection that carried the first request closes.
   * Only that one counts: after an abort, Node's fetch (undici) may open a
   * spare connection that never carries a request.
   */
  readonly requestConnectionClosed: Effect.Effect<void>
  /** Whether the script finished its answer (`res.end()`) before the connection closed. */
  readonly answerFinished: () => boolean
}

/** A chat completions chunk that carries a piece of text. */
export const delta = (content: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta: { content }, finish_reason: null }]
})

/** The chunk that ends a completion. */
export const finish = {
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta: {}, finish_reason: "stop" }]
}

/** A script that answers one text (`text()` of each request), then `[DONE]`, and ends the answer. */
export const answers = (text: () => string) => (x: Exchange) => {
  x.startEvents()
  x.event(delta(text()))
  x.event("[DONE]")
  x.res.end()
}

/** Starts a fake agent that runs `script` for every request. */
export const make = (script: (exchange: Exchange) => Promise<void> | void): Effect.Effect<FakeAgent, never, Scope.Scope> =>
  Effect.gen(function*() {
    const closed = yield* Deferred.make<void>()
    const received: Array<Received> = []
    let finished = false
    const timers = new Set<ReturnType<typeof setTimeout>>()
    let stopped = false

    const sleep = (millis: number) =>
      new Promise<void>((resolve) => {
        if (stopped) return
        const timer = setTimeout(() => {
          timers.delete(timer)
          resolve()
        }, millis)
        timers.add(timer)
      })

    const server = createServer((req, res) => {
      const parts: Array<Buffer> = []
      req.on("data", (part: Buffer) => parts.push(part))
      req.on("end", () => {
        const text = Buffer.concat(parts).toString("utf8")
        let body: unknown = text
        try {
          body = JSON.parse(text)
        } catch {
          // Kept as text: the test decides whether that is wrong.
        }
        if (received.length === 0) {
          req.socket.once("close", () => Deferred.unsafeDone(closed, Effect.void))
          res.once("finish", () => {
            finished = true
          })
        }
        received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, clientPort: req.socket.remotePort })
        const write = (chunk: string | Uint8Array) => {
          if (!res.destroyed && !res.writableEnded) res.write(chunk)
        }
        const exchange: Exchange = {
          req,
          res,
          body,
          sleep,
          startEvents: () => {
            res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
            res.flushHeaders()
          },
          event: (data) => write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`),
          raw: write
        }
        Promise.resolve(script(exchange)).catch((error: unknown) => {
          if (!res.headersSent) res.writeHead(599)
          res.end(String(error))
        })
      })
    })

    const port = yield* Effect.async<number>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as { port: number }).port)))
    })
    yield* Effect.addFinalizer(() =>
      Effect.async<void>((resume) => {
        stopped = true
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
    )

    return {
      url: `http://127.0.0.1:${port}`,
      received,
      requestConnectionClosed: Deferred.await(closed),
      answerFinished: () => finished
    }
  })

/**
 * The agent the runtime contract expects (see AgentRuntimeSuite): it echoes
 * the user's message word by word, a short pause before each word, and
 * reports an error at the word `AgentRuntimeSuite.failWord`.
 */
export const echo = async (x: Exchange) => {
  const { messages } = x.body as { readonly messages: ReadonlyArray<{ readonly content: string }> }
  x.startEvents()
  for (const chunk of EchoAgent.chunksOf(messages.at(-1)?.content ?? "")) {
    // A client that went away hears no more.
    if (x.res.destroyed) return
    if (chunk.includes(AgentRuntimeSuite.failWord)) {
      x.event({ error: { message: "the model broke down", type: "server_error" } })
      return void x.res.end()
    }
    await x.sleep(2)
    x.event(delta(chunk))
  }
  x.event(finish)
  x.event("[DONE]")
  x.res.end()
}

/** A runtime layer (`HttpAgentRuntime.layer`, or `make` on another client) pointed at an echoing fake agent that lives as long as it. */
export const echoBehind = (
  build: (config: { readonly endpointFor: () => string }) => Layer.Layer<AgentRuntime.AgentRuntime>
): Layer.Layer<AgentRuntime.AgentRuntime> =>
  Layer.unwrapScoped(Effect.map(make(echo), (agent) => build({ endpointFor: () => agent.url })))
