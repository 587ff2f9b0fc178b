/**
 * The AgentRuntime port over the deployed agent's own HTTP endpoint, in the
 * OpenAI-compatible chat completions protocol: one streaming POST to
 * `<base>/v1/chat/completions` per turn, the Server-Sent Events of the answer
 * turned into reply chunks. Every failure becomes an `AgentError` whose
 * message is safe to show and whose cause keeps the raw error for the log;
 * interrupting the reply aborts the request, which closes the connection.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { AgentRuntime, type Conversation, type Deployment, Steps, Tracing } from "@hosting/core"
import { Chunk, Config, type ConfigError, Duration, Effect, Exit, FiberId, identity, Layer, Option, Redacted, Scope, Stream } from "effect"
import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser"
import * as Http from "node:http"
import * as Https from "node:https"
import type { Readable } from "node:stream"

/** How the runtime finds and calls the agent of a deployment. */
export interface HttpAgentRuntimeConfig {
  /** Base URL of the deployment's agent (default: `defaultEndpoint`). */
  readonly endpointFor?: ((deployment: Deployment.DeploymentRecord) => string) | undefined
  /** The `model` sent to the agent (default: `defaultModel`). */
  readonly model?: ((deployment: Deployment.DeploymentRecord) => string) | undefined
  /** How long the agent may take to send its response headers (default 10 seconds). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Longest silence between two pieces of the answer before the agent counts as stalled (default 60 seconds). */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** Extra request headers, such as an API key; their values never reach traces. */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
}

/** One message of the chat completions request. */
export interface ChatMessage {
  readonly role: "user" | "assistant"
  readonly content: string
}

/** Port of the agent when its spec names none. */
export const defaultPort = 8080

/** Largest JSON answer, and largest single SSE event, read: a runaway agent cannot exhaust memory. */
export const maxAnswerBytes = 8 * 1024 * 1024

// An error body only helps the log; a little of it is enough.
const maxErrorBodyBytes = 4 * 1024

const nonEmptyString = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""

/**
 * The spec's `endpoint` when it is a string, else the agent's Service in its
 * namespace: `http://<agent_name>.<namespace>.svc.cluster.local:<spec.port or 8080>`.
 */
export const defaultEndpoint = (deployment: Deployment.DeploymentRecord): string => {
  const endpoint = deployment.spec["endpoint"]
  if (nonEmptyString(endpoint)) return endpoint.trim()
  const port = deployment.spec["port"]
  const validPort = typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535
  return `http://${deployment.agent_name}.${deployment.namespace}.svc.cluster.local:${validPort ? port : defaultPort}`
}

/** The spec's `model` when it is a string, else the agent's name. */
export const defaultModel = (deployment: Deployment.DeploymentRecord): string => {
  const model = deployment.spec["model"]
  return nonEmptyString(model) ? model : deployment.agent_name
}

/** The chat completions URL of a base URL, parsed (see `completionsUrl`); undefined when it is not an http(s) URL. */
const completionsTarget = (base: string): URL | undefined => {
  let url: URL
  try {
    url = new URL(base)
  } catch {
    return undefined
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  const path = url.pathname.replace(/\/+$/, "")
  url.pathname = path.endsWith("/chat/completions")
    ? path
    : path.endsWith("/v1")
    ? `${path}/chat/completions`
    : `${path}/v1/chat/completions`
  return url
}

/**
 * The chat completions URL of a base URL. A base that already ends in `/v1`
 * (as OpenAI client libraries write it) or names the full path is taken as is,
 * so either spelling of an endpoint works. `None` when it is not an http(s) URL.
 */
export const completionsUrl = (base: string): Option.Option<string> =>
  Option.map(Option.fromNullable(completionsTarget(base)), (url) => url.toString())

// The protocol carries text only, so attachments are named for the agent to know they exist.
const textOf = (message: Conversation.Message): string => {
  if (message.attachments.length === 0) return message.content
  const files = `[Attached files: ${message.attachments.map((a) => a.filename).join(", ")}]`
  return message.content === "" ? files : `${message.content}\n\n${files}`
}

/**
 * The messages of a turn's request: the history in order, without assistant
 * replies that did not complete (a partial reply would read as the agent's
 * whole answer), then the new user message.
 */
export const chatMessages = (turn: AgentRuntime.Turn): ReadonlyArray<ChatMessage> =>
  [...turn.history.filter((m) => m.role === "user" || m.status === "complete"), turn.message].map((m) => ({
    role: m.role,
    content: textOf(m)
  }))

/** A duration as people read it in an error message: "250 ms", "10 s", "1.5 s", "2 min". */
const spoken = (duration: Duration.Duration): string => {
  const millis = Duration.toMillis(duration)
  if (millis < 1000) return `${Math.round(millis)} ms`
  if (millis >= 60_000 && millis % 60_000 === 0) return `${millis / 60_000} min`
  return `${Number((millis / 1000).toFixed(1))} s`
}

const agentError = (message: string, cause?: unknown) =>
  new AgentRuntime.AgentError(cause === undefined ? { message } : { message, cause })

const brokeOff = (cause?: unknown) => agentError("The agent's reply broke off", cause)
const unreadable = (cause: unknown) => agentError("The agent's reply could not be read", cause)
const reportedError = (cause: unknown) => agentError("The agent reported an error", cause)

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const firstChoice = (payload: Record<string, unknown>): Record<string, unknown> | undefined => {
  const choices = payload["choices"]
  if (!Array.isArray(choices)) return undefined
  const choice: unknown = choices.find((c) => isRecord(c) && c["index"] === 0) ?? choices[0]
  return isRecord(choice) ? choice : undefined
}

const parseJson = (text: string): Effect.Effect<unknown, AgentRuntime.AgentError> =>
  Effect.try({ try: () => JSON.parse(text) as unknown, catch: unreadable })

/** What one SSE event of the answer says. */
type Piece =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Finished" }
  | { readonly _tag: "Done" }
  | { readonly _tag: "Failed"; readonly error: AgentRuntime.AgentError }
  | { readonly _tag: "Nothing" }

const nothing: Piece = { _tag: "Nothing" }

const pieceOf = (event: EventSourceMessage): Piece => {
  const data = event.data.trim()
  if (data === "[DONE]") return { _tag: "Done" }
  if (data === "") return nothing
  let payload: unknown
  try {
    payload = JSON.parse(data)
  } catch (cause) {
    return { _tag: "Failed", error: unreadable(cause) }
  }
  if (!isRecord(payload)) return { _tag: "Failed", error: unreadable(new Error(`not a JSON object: ${data.slice(0, 200)}`)) }
  // OpenAI-compatible servers report a failure mid-stream as an event with an `error` object.
  if (event.event === "error" || payload["error"] !== undefined) return { _tag: "Failed", error: reportedError(payload) }
  const choice = firstChoice(payload)
  if (choice === undefined) return nothing
  const delta = choice["delta"]
  const content = isRecord(delta) ? delta["content"] : undefined
  if (typeof content === "string" && content !== "") return { _tag: "Text", text: content }
  const finish = choice["finish_reason"]
  return finish !== undefined && finish !== null ? { _tag: "Finished" } : nothing
}

/** How a reply reads its answer's bytes: each read is `heard`, each failure of the body `failure`. */
interface Reading {
  readonly heard: () => void
  readonly failure: (error: unknown) => AgentRuntime.AgentError
}

/**
 * Reads an SSE answer as its bytes arrive, in plain code: `feed` gives the
 * texts each piece of bytes completes, `end` those the decoder still held at
 * the body's end. Once the answer said `[DONE]` or failed, it is `stopped`
 * and takes nothing more. `outcome` is how the answer ended: `undefined` for
 * a proper end (`[DONE]`, or a `finish_reason` before the body's end), else
 * its error; an answer with neither broke off.
 */
const eventReader = () => {
  const events: Array<EventSourceMessage> = []
  let overflow: ParseError | undefined
  let ended = false
  const parser = createParser({
    onEvent: (event) => events.push(event),
    // Unknown fields and bad `retry` values are noise a lenient reader skips; only overflow is fatal.
    onError: (error) => {
      if (error.type === "max-buffer-size-exceeded") overflow = error
    },
    maxBufferSize: maxAnswerBytes
  })
  const decoder = new TextDecoder()
  let stop: "done" | AgentRuntime.AgentError | undefined
  const textsOf = (text: string): Array<string> => {
    const texts: Array<string> = []
    if (stop !== undefined) return texts
    parser.feed(text)
    for (const event of events.splice(0)) {
      const piece = pieceOf(event)
      if (piece._tag === "Text") texts.push(piece.text)
      else if (piece._tag === "Finished") ended = true
      else if (piece._tag === "Done") {
        ended = true
        stop = "done"
        return texts
      } else if (piece._tag === "Failed") {
        stop = piece.error
        return texts
      }
    }
    if (overflow !== undefined) stop = unreadable(overflow)
    return texts
  }
  return {
    feed: (bytes: Uint8Array) => textsOf(decoder.decode(bytes, { stream: true })),
    end: () => textsOf(decoder.decode()),
    stopped: () => stop !== undefined,
    outcome: (): AgentRuntime.AgentError | undefined =>
      stop === "done" || (stop === undefined && ended) ? undefined : stop ?? brokeOff()
  }
}

/**
 * The texts of an SSE answer as pulls: one pull reads the body and gives
 * the texts that read completes. It ends at `[DONE]` without waiting for the
 * agent to close the response.
 */
const eventPull = (body: Stream.Stream<Uint8Array, unknown>, reading: Reading) =>
  Effect.map(Stream.toPull(body), (read) => {
    const reader = eventReader()
    /** After the texts of the read that stopped the answer, the pull only ends or fails. */
    let finished = false
    const last = (): Effect.Effect<never, Option.Option<AgentRuntime.AgentError>> => {
      const error = reader.outcome()
      return Effect.fail(error === undefined ? Option.none() : Option.some(error))
    }
    const emit = (texts: Array<string>) => {
      if (reader.stopped()) finished = true
      return texts.length > 0 ? Effect.succeed(Chunk.unsafeFromArray(texts)) : finished ? last() : pull
    }
    const pull: Effect.Effect<Chunk.Chunk<string>, Option.Option<AgentRuntime.AgentError>> = Effect.suspend(() =>
      finished ? last() : Effect.matchEffect(read, {
        onFailure: Option.match({
          // The body ended: what the decoder still holds, then the end checks.
          onNone: () => {
            finished = true
            return emit(reader.end())
          },
          onSome: (error) => Effect.fail(Option.some(reading.failure(error)))
        }),
        onSuccess: (chunk) => {
          reading.heard()
          const texts: Array<string> = []
          for (const bytes of chunk) texts.push(...reader.feed(bytes))
          return emit(texts)
        }
      })
    )
    return pull
  })

/** The texts of an SSE answer as a stream (see `eventPull`). */
const fromEventStream = (body: Stream.Stream<Uint8Array, unknown>, reading: Reading) =>
  Stream.unwrapScoped(Effect.map(eventPull(body, reading), Stream.repeatEffectChunkOption))

/**
 * Hands every text of an SSE answer on a Node response body to `emit`, in
 * order, driven by the body's own data events: no fiber turn per read,
 * which every chunk of every reply would pay. Ends as `eventPull` does;
 * interrupting it stops reading.
 */
const pushEvents = (source: Readable, reading: Reading, emit: (text: string) => void) =>
  Effect.async<void, AgentRuntime.AgentError>((resume) => {
    const reader = eventReader()
    let settled = false
    const settle = (result: Effect.Effect<void, AgentRuntime.AgentError>) => {
      if (settled) return
      settled = true
      detach()
      resume(result)
    }
    const finish = () => {
      const error = reader.outcome()
      settle(error === undefined ? Effect.void : Effect.fail(error))
    }
    const give = (texts: Array<string>) => {
      for (const text of texts) emit(text)
    }
    const onData = (bytes: Uint8Array) => {
      reading.heard()
      give(reader.feed(bytes))
      if (reader.stopped()) finish()
    }
    const onEnd = () => {
      give(reader.end())
      finish()
    }
    const onError = (error: unknown) => settle(Effect.fail(reading.failure(error)))
    const onClose = () => onError(new Error("the response was closed before its end"))
    const detach = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
      source.off("close", onClose)
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    source.on("close", onClose)
    if (source.destroyed && !source.readableEnded) onClose()
    return Effect.sync(detach)
  })

/** The reply of an agent that ignored `stream: true` and answered one JSON completion. */
const fromJsonAnswer = (body: Stream.Stream<Uint8Array, AgentRuntime.AgentError>) =>
  Stream.unwrap(Effect.gen(function*() {
    let size = 0
    const text = yield* body.pipe(
      Stream.tap((bytes) => {
        size += bytes.length
        return size > maxAnswerBytes ? Effect.fail(unreadable(new Error(`answer over ${maxAnswerBytes} bytes`))) : Effect.void
      }),
      Stream.decodeText(),
      Stream.mkString
    )
    const payload = yield* parseJson(text)
    if (!isRecord(payload)) return yield* Effect.fail(unreadable(new Error(`not a JSON object: ${text.slice(0, 200)}`)))
    if (payload["error"] !== undefined) return yield* Effect.fail(reportedError(payload))
    const message = firstChoice(payload)?.["message"]
    const content = isRecord(message) ? message["content"] : undefined
    if (content === null || content === "") return Stream.empty
    if (typeof content !== "string") return yield* Effect.fail(unreadable(new Error(`no choices[0].message.content in ${text.slice(0, 200)}`)))
    return Stream.make(content)
  }))

/** The agent's answer, whichever client brought it. */
interface Answer {
  readonly url: URL
  readonly status: number
  readonly contentType: string
  /** The body as a stream (a JSON answer, an error's body, the `Stream` form). */
  readonly stream: Stream.Stream<Uint8Array, unknown>
  /** The body as Node's readable, when the client is Node's: read in its own data events. */
  readonly source: Readable | undefined
  /** Cuts the request at once, from plain code (a stalled agent's): the pending read fails. */
  readonly abort: () => void
  /** Ends the request when the reply is done with the answer, as the reply ended. */
  readonly release: (exit: Exit.Exit<unknown, unknown>) => Effect.Effect<void>
}

/**
 * Sends the POST of a turn. The request lives until its answer's `release`;
 * interrupting the send aborts it. Failing before an answer means the agent
 * could not be reached; no answer's headers within `connectTimeout` fails
 * with `ConnectTimedOut` (the request aborted). `traceparent` is the turn's,
 * sent unless a tracer is on (the request's span is then the agent's parent).
 */
type Send = (
  url: URL,
  body: string,
  traceparent: string | undefined,
  connectTimeout: Duration.Duration
) => Effect.Effect<Answer, unknown>

/** The failure of a send whose answer did not come within its connect timeout (told apart by its class: a traced failure reaches `mapError` as a proxy of it). */
class ConnectTimedOut extends Error {
  constructor() {
    super("no answer within the connect timeout")
  }
}

/** The longest delay `setTimeout` keeps (a 32-bit signed count of milliseconds). */
const maxTimerMs = 2 ** 31 - 1

// The body of a failed answer goes into the error's cause only; it is read briefly and cut short.
const statusError = (answer: Answer, idle: Duration.Duration) =>
  answer.stream.pipe(
    Stream.decodeText(),
    Stream.runFoldWhile("", (text) => text.length < maxErrorBodyBytes, (text, chunk) => text + chunk),
    Effect.timeout(Duration.min(idle, Duration.seconds(5))),
    Effect.orElseSucceed(() => ""),
    Effect.flatMap((body) =>
      Effect.fail(agentError(
        `The agent answered ${answer.status}`,
        new Error(`HTTP ${answer.status} from ${answer.url}: ${body.slice(0, maxErrorBodyBytes)}`)
      ))
    )
  )

/**
 * Watches a reply for silence, in plain code: `heard` marks that bytes
 * arrived; after `idleMs` without any, `stop` runs (it aborts the request, so
 * the pending read fails) and `fired` tells the read's failure apart from a
 * connection that broke. One timer per reply, set again only when it comes
 * due, not at every chunk; `cancel` clears it when the reply ends. No fiber
 * sleeps for it: one per reply cost each reply a fork and its scope. Time is
 * the monotonic clock's: a wall clock set forward would end a healthy reply.
 */
const watchIdle = (idleMs: number, stop: () => void) => {
  let last = performance.now()
  let fired = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const check = () => {
    const due = last + idleMs - performance.now()
    if (due > 0) {
      timer = setTimeout(check, due)
      return
    }
    fired = true
    stop()
  }
  // Beyond what a timer holds (about 24.8 days, or infinite), no watch: Node would fire it at once.
  if (idleMs <= maxTimerMs) timer = setTimeout(check, idleMs)
  return {
    heard: () => void (last = performance.now()),
    fired: () => fired,
    cancel: () => clearTimeout(timer)
  }
}

const isJson = (answer: Answer) => {
  const type = answer.contentType.split(";")[0]!.trim().toLowerCase()
  return type === "application/json" || type.endsWith("+json")
}

/** The runtime over a way to send (the platform's client, or Node's own). */
const makeWith = (config: HttpAgentRuntimeConfig, send: Send): AgentRuntime.AgentRuntime["Type"] => {
  const endpointFor = config.endpointFor ?? defaultEndpoint
  const modelFor = config.model ?? defaultModel
  const connectTimeout = Duration.decode(config.connectTimeout ?? Duration.seconds(10))
  const idleTimeout = Duration.decode(config.idleTimeout ?? Duration.seconds(60))
  const idleMs = Duration.toMillis(idleTimeout)
  const stalledMessage = `The agent stopped answering for ${spoken(idleTimeout)}`
  // Refused, unresolvable, reset before the headers: to a person, all of them mean the agent is not there.
  const unreached = (error: unknown) =>
    error instanceof ConnectTimedOut
      ? agentError(`The agent did not answer within ${spoken(connectTimeout)}`)
      : agentError("The agent is not reachable", error)

  /** The reply of an agent that answered one JSON completion instead of events. */
  const jsonReply = (answer: Answer, reading: Reading) =>
    fromJsonAnswer(answer.stream.pipe(
      Stream.mapChunks((chunk) => {
        reading.heard()
        return chunk
      }),
      Stream.mapError(reading.failure)
    ))

  /** Hands each text of a good answer to `emit` as it is read: with Node's client in the body's own data events. */
  const read = (answer: Answer, reading: Reading, emit: (text: string) => void) =>
    answer.source !== undefined && !isJson(answer)
      ? pushEvents(answer.source, reading, emit)
      // The platform's body (fetch), or one JSON completion: the stream's chunks, each text handed on.
      : Stream.runForEachChunk(
        isJson(answer) ? jsonReply(answer, reading) : fromEventStream(answer.stream, reading),
        (texts) => Effect.sync(() => Chunk.forEach(texts, (text) => emit(text)))
      )

  /**
   * Sends the turn and reads its answer. The request is released when the
   * reading ends, however it ends; the mask leaves no moment between the
   * answer's arrival and the release's setting where an interrupt would
   * lose the request (and, the region being the mask's, the release needs
   * no mask of its own). Silence is watched from the answer's headers to the
   * end of the reading: a stall aborts the request.
   */
  const exchange = (turn: AgentRuntime.Turn, emit: (text: string) => void) => {
    const base = endpointFor(turn.deployment)
    // Parsed once a reply: the send takes it as it is.
    const url = completionsTarget(base)
    if (url === undefined) {
      return Effect.fail(agentError("The agent's endpoint is not a valid http(s) URL", new Error(`endpoint: ${base}`)))
    }
    const body = JSON.stringify({ model: modelFor(turn.deployment), messages: chatMessages(turn), stream: true })
    return Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(restore(Effect.mapError(send(url, body, turn.traceparent, connectTimeout), unreached)), (answer) => {
        if (answer.status < 200 || answer.status >= 300) {
          return Steps.onExitInRegion(restore(statusError(answer, idleTimeout)), answer.release)
        }
        const stalled = watchIdle(idleMs, answer.abort)
        const reading: Reading = {
          heard: stalled.heard,
          failure: (error) => stalled.fired() ? agentError(stalledMessage) : brokeOff(error)
        }
        return Steps.onExitInRegion(restore(read(answer, reading, emit)), (exit) => {
          stalled.cancel()
          return answer.release(exit)
        })
      })
    )
  }

  const reply = (turn: AgentRuntime.Turn, emit: (text: string) => void) =>
    Effect.withFiberRuntime<void, AgentRuntime.AgentError>((fiber) =>
      Tracing.withSpanIn(fiber, exchange(turn, emit), "HttpAgentRuntime.reply", {
        attributes: {
          "hosting.deployment_id": turn.deployment.id,
          "hosting.agent": `${turn.deployment.publisher}/${turn.deployment.agent_name}`,
          "hosting.namespace": turn.deployment.namespace
        }
      })
    )

  return AgentRuntime.AgentRuntime.of({ reply })
}

/** Configured headers as sent, values unwrapped. */
const headersOf = (config: HttpAgentRuntimeConfig): Record<string, string> =>
  Object.fromEntries(
    Object.entries(config.headers ?? {}).map(([name, value]) => [name, Redacted.isRedacted(value) ? Redacted.value(value) : value])
  )

const accept = "text/event-stream, application/json"

/** Builds the runtime on the `HttpClient` in context (`FetchHttpClient.layer`, or any other); `layer` uses Node's client instead. */
export const make = (
  config: HttpAgentRuntimeConfig = {}
): Effect.Effect<AgentRuntime.AgentRuntime["Type"], never, HttpClient.HttpClient> =>
  Effect.map(HttpClient.HttpClient, (httpClient) => {
    const extraHeaders = headersOf(config)
    // The HTTP client span records request headers; the configured ones may carry keys under any name.
    const redactedNames = Object.keys(extraHeaders).map((name) => name.toLowerCase())
    // The request's life is tied to a scope of its own: closing it aborts the request.
    const client = HttpClient.withScope(httpClient)
    const send: Send = (url, body, traceparent, connectTimeout) =>
      Effect.flatMap(Effect.zip(Tracing.currentSpan, Scope.make()), ([span, scope]) =>
        client.execute(HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeader("accept", accept),
          // With a tracer on, the client propagates its own span; without, the turn's trace goes to the agent.
          Option.isNone(span) && traceparent !== undefined ? HttpClientRequest.setHeader("traceparent", traceparent) : identity,
          // After the defaults, so that a configured header wins.
          HttpClientRequest.setHeaders(extraHeaders),
          HttpClientRequest.bodyText(body, "application/json")
        )).pipe(
          Scope.extend(scope),
          Effect.locallyWith(Headers.currentRedactedNames, (names) => [...names, ...redactedNames]),
          Effect.map((response): Answer => ({
            url,
            status: response.status,
            contentType: response.headers["content-type"] ?? "",
            stream: response.stream,
            source: undefined,
            // From a timer's callback: the scope's closing needs nothing of a fiber's.
            abort: () => void Effect.runFork(Scope.close(scope, Exit.interrupt(FiberId.none))),
            release: (exit) => Scope.close(scope, exit)
          })),
          Effect.timeoutFail({ duration: connectTimeout, onTimeout: () => new ConnectTimedOut() }),
          Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
        ))
    return makeWith(config, send)
  })

/** The agents that keep connections to the agents open between replies (one for http, one for https). */
interface Agents {
  readonly http: Http.Agent
  readonly https: Https.Agent
}

/**
 * Sends with Node's own client on kept-alive connections. After an answer
 * that ended well its connection goes back to the pool; released otherwise
 * (an interrupt, a stall, a failed answer) the request is destroyed. A
 * request that went out on a pooled connection the agent was closing at
 * that moment (reset before any answer) is sent once more on a new one:
 * the agent never saw it. The request carries a W3C `traceparent`
 * so that the agent's spans join the turn's trace: the current span's while
 * a tracer is on (the platform's client does the same for `make`), else the
 * turn's own.
 */
const nodeSend = (agents: Agents, extraHeaders: Record<string, string>): Send => (url, body, turnTraceparent, connectTimeout) =>
  Effect.flatMap(Tracing.currentSpan, (span) =>
    Effect.async<Answer, unknown>((resume) => {
      const traceparent = Option.isSome(span) ? Tracing.traceparentOf(span.value) ?? turnTraceparent : turnTraceparent
      const https = url.protocol === "https:"
      let request: Http.ClientRequest
      // The connect timeout as a timer of the request's own, not a fiber raced against it: no answer's headers
      // in time aborts the request (its error comes after the failure, and is not heard).
      let waiting = true
      const ms = Duration.toMillis(connectTimeout)
      // Beyond what a timer holds (about 24.8 days, or infinite), no timer: Node would fire it at once.
      const timer = ms <= maxTimerMs
        ? setTimeout(() => {
          waiting = false
          resume(Effect.fail(new ConnectTimedOut()))
          request.destroy()
        }, ms)
        : undefined
      const settle = (effect: Effect.Effect<Answer, unknown>) => {
        if (!waiting) return
        waiting = false
        clearTimeout(timer)
        resume(effect)
      }
      const attempt = (retried: boolean) => {
        const req = (https ? Https.request : Http.request)(url, {
          method: "POST",
          agent: https ? agents.https : agents.http,
          headers: {
            accept,
            "content-type": "application/json",
            ...(traceparent === undefined ? undefined : { traceparent }),
            ...extraHeaders,
            "content-length": Buffer.byteLength(body)
          }
        })
        request = req
        let answered = false
        // Errors after the answer reach its body (which the reply reads); this listener only keeps them handled.
        req.on("error", (error: NodeJS.ErrnoException) => {
          if (answered) return
          if (!retried && req.reusedSocket && error.code === "ECONNRESET" && waiting) attempt(true)
          else settle(Effect.fail(error))
        })
        req.on("response", (response) => {
          answered = true
          /**
           * When the reply is done: an answer read to its end left its connection in the pool already. After an
           * answer that ended well (its `[DONE]` can come a moment before the end of its body), the rest is
           * read so that the connection goes back, within `endGraceMs`. Anything else is cut: an interrupt,
           * a stall, an answer that failed.
           */
          const release = (exit: Exit.Exit<unknown, unknown>) => {
            if (response.readableEnded) return
            if (Exit.isFailure(exit)) return void req.destroy()
            if (!response.complete) {
              const timer = setTimeout(() => req.destroy(), endGraceMs)
              timer.unref()
              response.once("end", () => clearTimeout(timer))
            }
            response.resume()
          }
          settle(Effect.succeed({
            url,
            status: response.statusCode ?? 0,
            contentType: response.headers["content-type"] ?? "",
            // Made when read (a JSON answer, an error's body): the events of an answer are read from `source`.
            // `release` decides what becomes of the body when the reply is done with it.
            get stream() {
              return NodeStream.fromReadable<unknown, Uint8Array>(() => response, identity, { closeOnDone: false })
            },
            source: response,
            abort: () => void req.destroy(),
            release: (exit) => Effect.sync(() => release(exit))
          }))
        })
        req.end(body)
      }
      attempt(false)
      return Effect.sync(() => {
        clearTimeout(timer)
        request.destroy()
      })
    }))

/** How long a kept-alive connection may take to finish an answer that already said `[DONE]`. */
const endGraceMs = 2000

/** Node's agents for the runtime's life, kept-alive connections closed at its end. */
const nodeAgents = Effect.acquireRelease(
  Effect.sync((): Agents => {
    // Idle pooled connections are dropped after 4 s, before most servers' own keep-alive timeout (Node's is 5 s).
    const options = { keepAlive: true, timeout: 4000 }
    return { http: new Http.Agent(options), https: new Https.Agent(options) }
  }),
  (agents) =>
    Effect.sync(() => {
      agents.http.destroy()
      agents.https.destroy()
    })
)

/**
 * The AgentRuntime over each deployment's HTTP endpoint, through Node's own
 * `http` client on kept-alive connections: no web streams, no connection
 * opened and closed per reply, and the answer read in its body's own `data`
 * events (a chunk costs no fiber turn). To call the agents through another
 * `HttpClient` (the platform's `fetch`, a client with a proxy), provide it to
 * `make`.
 */
export const layer = (config: HttpAgentRuntimeConfig = {}): Layer.Layer<AgentRuntime.AgentRuntime> =>
  Layer.scoped(AgentRuntime.AgentRuntime, Effect.map(nodeAgents, (agents) => makeWith(config, nodeSend(agents, headersOf(config)))))

/** `layer` with its config read through Effect's `Config` (the environment by default). */
export const layerConfig = (
  config: Config.Config.Wrap<HttpAgentRuntimeConfig>
): Layer.Layer<AgentRuntime.AgentRuntime, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
