/**
 * A fake remote agent that speaks A2A (v1.0), built with the official SDK's
 * request handler and served on 127.0.0.1 (a free port): the agent the
 * AgentRuntime contract suite expects (see AgentRuntimeSuite), behind the
 * protocol. It echoes the user's text back as artifact updates, one chunk
 * of `EchoAgent.chunksOf` at a time after `delay`, then completes the task;
 * the chunk holding `failOn` fails the task instead, after the chunks before
 * it. CancelTask cancels a running task. It records what it was sent and
 * which tasks were cancelled, and stops with its scope.
 *
 * Not exported from the package's index: import `@hosting/testing/A2aEchoAgent`
 * (it loads the SDK and `node:http`).
 */
import type { AgentCard, Message, Part } from "@a2a-js/sdk"
import type { AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server"
import { Effect, type Scope } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { chunksOf } from "./EchoAgent.js"

export interface A2aEchoAgentOptions {
  /** Milliseconds before each chunk (default 5). */
  readonly delay?: number | undefined
  /** The word whose chunk fails the task. */
  readonly failOn?: string | undefined
  /** Whether the card says the agent streams (default true). */
  readonly streaming?: boolean | undefined
}

/** One message as the agent received it. */
export interface Received {
  readonly contextId: string
  readonly taskId: string
  readonly text: string
  readonly headers: Readonly<Record<string, string | Array<string> | undefined>>
}

/** A running fake A2A agent. */
export interface A2aEchoAgent {
  /** The agent's base URL: its card is at `<url>/.well-known/agent-card.json`. */
  readonly url: string
  /** The card's URL. */
  readonly cardUrl: string
  readonly received: ReadonlyArray<Received>
  /** The ids of the tasks CancelTask reached while they ran. */
  readonly cancelled: ReadonlyArray<string>
  /** The ids of the tasks that ran to an end of theirs (completed, failed or cancelled). */
  readonly ended: ReadonlyArray<string>
}

const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" })

const textOf = (message: Message) => message.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("")

/** Starts the agent; it stops (its server closed, its tasks left to end) when the scope closes. */
export const make = (options: A2aEchoAgentOptions = {}): Effect.Effect<A2aEchoAgent, never, Scope.Scope> =>
  Effect.gen(function*() {
    const [{ AgentCard: AgentCardCodec, Role, TaskState }, server] = yield* Effect.promise(() =>
      Promise.all([import("@a2a-js/sdk"), import("@a2a-js/sdk/server")])
    )
    const delay = options.delay ?? 5
    const received: Array<Received> = []
    const cancelled: Array<string> = []
    const ended: Array<string> = []
    const cancelRequested = new Set<string>()
    const timers = new Set<ReturnType<typeof setTimeout>>()
    let stopped = false
    const sleep = (millis: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          timers.delete(timer)
          resolve()
        }, millis)
        timers.add(timer)
      })

    const status = (state: typeof TaskState[keyof typeof TaskState], text?: string, task?: { id: string; contextId: string }) => ({
      state: state as never,
      message: text === undefined || task === undefined
        ? undefined
        : {
          messageId: globalThis.crypto.randomUUID(),
          contextId: task.contextId,
          taskId: task.id,
          role: Role.ROLE_AGENT,
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: []
        },
      timestamp: new Date().toISOString()
    })

    const executor: AgentExecutor = {
      execute: async (request: RequestContext, bus: ExecutionEventBus) => {
        const task = { id: request.taskId, contextId: request.contextId }
        const text = textOf(request.userMessage)
        const headers = request.context.state.get("headers")
        received.push({ contextId: task.contextId, taskId: task.id, text, headers: (headers ?? {}) as Received["headers"] })
        bus.publish({
          kind: "task",
          data: { ...task, status: status(TaskState.TASK_STATE_WORKING), artifacts: [], history: [request.userMessage], metadata: undefined }
        })
        const update = (state: typeof TaskState[keyof typeof TaskState], message?: string) =>
          bus.publish({ kind: "statusUpdate", data: { taskId: task.id, contextId: task.contextId, status: status(state, message, task), metadata: undefined } })
        let index = 0
        for (const chunk of chunksOf(text)) {
          await sleep(delay)
          if (stopped) return
          if (cancelRequested.has(task.id)) {
            cancelled.push(task.id)
            ended.push(task.id)
            update(TaskState.TASK_STATE_CANCELED, "Cancelled.")
            bus.finished()
            return
          }
          if (options.failOn !== undefined && chunk.includes(options.failOn)) {
            ended.push(task.id)
            update(TaskState.TASK_STATE_FAILED, "The echo agent broke down.")
            bus.finished()
            return
          }
          bus.publish({
            kind: "artifactUpdate",
            data: {
              taskId: task.id,
              contextId: task.contextId,
              artifact: { artifactId: `${task.id}-reply`, name: "reply", description: "", parts: [textPart(chunk)], metadata: undefined, extensions: [] },
              append: index++ > 0,
              lastChunk: false,
              metadata: undefined
            }
          })
        }
        ended.push(task.id)
        update(TaskState.TASK_STATE_COMPLETED)
        bus.finished()
      },
      cancelTask: async (taskId: string) => {
        cancelRequested.add(taskId)
      }
    }

    const address = { url: "" }
    const cardJson = () => ({
      name: "echo",
      description: "Echoes the user's message back, word by word.",
      version: "1.0.0",
      supportedInterfaces: [{ url: `${address.url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
      capabilities: { streaming: options.streaming ?? true, pushNotifications: false },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"], examples: [] }]
    })
    let transport: InstanceType<typeof server.JsonRpcTransportHandler> | undefined
    const transportOf = () => {
      transport ??= new server.JsonRpcTransportHandler(
        new server.DefaultRequestHandler(AgentCardCodec.fromJSON(cardJson()) as AgentCard, new server.InMemoryTaskStore(), executor)
      )
      return transport
    }

    const answer = async (req: IncomingMessage, res: ServerResponse) => {
      const path = (req.url ?? "/").split("?")[0]
      if (req.method === "GET" && path === "/.well-known/agent-card.json") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(cardJson()))
        return
      }
      if (req.method !== "POST" || path !== "/a2a") {
        res.writeHead(404).end()
        return
      }
      let body = ""
      for await (const piece of req) body += String(piece)
      const version = req.headers["a2a-version"]
      const context = server.defaultServerCallContextBuilder({
        extensions: undefined,
        user: undefined,
        headers: req.headers,
        requestedVersion: typeof version === "string" ? version : "1.0"
      })
      const result = await transportOf().handle(body, context)
      if (!(Symbol.asyncIterator in result)) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result))
        return
      }
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      // A client that goes away ends the stream; the task itself runs on, as an A2A agent's does.
      const iterator = result[Symbol.asyncIterator]()
      res.on("close", () => void iterator.return?.(undefined))
      try {
        for await (const frame of { [Symbol.asyncIterator]: () => iterator }) {
          if (res.destroyed) break
          res.write(`data: ${JSON.stringify(frame)}\n\n`)
        }
      } finally {
        res.end()
      }
    }

    const http = createServer((req, res) => {
      answer(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500)
        res.end()
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void>((resume) => {
        http.listen(0, "127.0.0.1", () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          stopped = true
          for (const timer of timers) clearTimeout(timer)
          http.close(() => resume(Effect.void))
          http.closeAllConnections()
        })
    )
    address.url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
    return { url: address.url, cardUrl: `${address.url}/.well-known/agent-card.json`, received, cancelled, ended }
  })
