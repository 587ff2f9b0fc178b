/**
 * The AgentRuntime port over agents that speak the Agent2Agent protocol
 * (A2A, v1.0) themselves, through the official SDK's client. Each turn is
 * one SendStreamingMessage whose `contextId` is the conversation's id, so
 * the agent keeps the conversation's context; the answer's artifact updates
 * (and, failing those, its final status message) are the reply's chunks.
 * A task that fails, is rejected or is cancelled by the agent fails the
 * reply; interrupting the reply closes the stream and sends CancelTask for
 * the remote task. The SDK is loaded at the first reply, not at start.
 */
import type { Message, Part, StreamResponse, Task, TaskStatus } from "@a2a-js/sdk"
import type { Client } from "@a2a-js/sdk/client"
import { AgentRuntime, AgentSpec, type Conversation, type Deployment, Recent, Tracing } from "@hosting/core"
import { Config, type ConfigError, Duration, Effect, Layer, Option, Redacted } from "effect"

/** How the runtime finds and calls the A2A agent of a deployment. */
export interface A2aAgentRuntimeConfig {
  /** The URL of the deployment's agent card (default: `defaultCardUrl`). */
  readonly cardUrlFor?: ((deployment: Deployment.DeploymentRecord) => string) | undefined
  /** How long the agent may take to give its card and the first event of its answer (default 10 seconds). */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** Longest silence between two events of the answer before the agent counts as stalled (default 60 seconds). */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /** How long a card is used before it is read again (default 60 seconds). */
  readonly cardTtl?: Duration.DurationInput | undefined
  /** How long a CancelTask sent after an interrupt may take (default 5 seconds). */
  readonly cancelTimeout?: Duration.DurationInput | undefined
  /** Extra request headers, such as an API key, on every request to the agents. */
  readonly headers?: Readonly<Record<string, string | Redacted.Redacted<string>>> | undefined
  /** The fetch the client uses (default: the global one). */
  readonly fetch?: typeof fetch | undefined
}

/** Where an A2A agent serves its card under its base URL. */
export const cardPath = "/.well-known/agent-card.json"

/** Port of the agent's Service when its spec names none (as for the HTTP runtime). */
export const defaultPort = 8080

/** Most cards (and their clients) kept at once. */
const maxCachedCards = 256

/**
 * The card URL of an endpoint: a URL whose path ends in `.json` is the card
 * itself, any other is a base URL whose card is at `cardPath` under it.
 * `None` when it is not an http(s) URL.
 */
export const cardUrlOf = (endpoint: string): Option.Option<string> => {
  const trimmed = endpoint.trim()
  if (!AgentSpec.isHttpUrl(trimmed)) return Option.none()
  const url = new URL(trimmed)
  if (!url.pathname.endsWith(".json")) url.pathname = `${url.pathname.replace(/\/+$/, "")}${cardPath}`
  return Option.some(url.toString())
}

/**
 * The spec's `endpoint` (a card URL or a base URL, see `cardUrlOf`), else
 * the card under the agent's Service in its namespace:
 * `http://<agent_name>.<namespace>.svc.cluster.local:<spec.port or 8080>`.
 */
export const defaultCardUrl = (deployment: Deployment.DeploymentRecord): string => {
  const endpoint = deployment.spec["endpoint"]
  if (typeof endpoint === "string" && endpoint.trim() !== "") return endpoint.trim()
  const port = deployment.spec["port"]
  const validPort = typeof port === "number" && Number.isInteger(port) && port >= 1 && port <= 65535
  return `http://${deployment.agent_name}.${deployment.namespace}.svc.cluster.local:${validPort ? port : defaultPort}`
}

/** The SDK's modules, loaded once at the first reply. */
type Sdk = readonly [typeof import("@a2a-js/sdk"), typeof import("@a2a-js/sdk/client")]

let sdkLoad: Promise<Sdk> | undefined
const loadSdk = (): Promise<Sdk> => {
  sdkLoad ??= Promise.all([import("@a2a-js/sdk"), import("@a2a-js/sdk/client")]).catch((error: unknown) => {
    sdkLoad = undefined
    throw error
  })
  return sdkLoad
}

const agentError = (message: string, cause?: unknown) =>
  new AgentRuntime.AgentError(cause === undefined ? { message } : { message, cause })

/** A duration as people read it in an error message: "250 ms", "10 s", "2 min". */
const spoken = (duration: Duration.Duration): string => {
  const millis = Duration.toMillis(duration)
  if (millis < 1000) return `${Math.round(millis)} ms`
  if (millis >= 60_000 && millis % 60_000 === 0) return `${millis / 60_000} min`
  return `${Number((millis / 1000).toFixed(1))} s`
}

/** The text of parts: text as is, data as JSON, a file by its name (the reply is text). */
export const textOfParts = (parts: ReadonlyArray<Part>): string =>
  parts.map((part) => {
    const content = part.content
    if (content === undefined) return ""
    switch (content.$case) {
      case "text":
        return content.value
      case "data":
        return JSON.stringify(content.value)
      case "url":
        return `[File: ${part.filename !== "" ? part.filename : content.value}]`
      case "raw":
        return `[File: ${part.filename !== "" ? part.filename : part.mediaType}]`
    }
  }).join("")

// The protocol carries files as parts; ours are named in the text, as for the HTTP runtime.
const textOf = (message: Conversation.Message): string => {
  if (message.attachments.length === 0) return message.content
  const files = `[Attached files: ${message.attachments.map((a) => a.filename).join(", ")}]`
  return message.content === "" ? files : `${message.content}\n\n${files}`
}

/** What the reply does after an event: go on, end, or fail. */
type Step = { readonly _tag: "More" } | { readonly _tag: "End" } | { readonly _tag: "Fail"; readonly error: AgentRuntime.AgentError }

const more: Step = { _tag: "More" }
const end: Step = { _tag: "End" }

// Text from the agent goes into a message shown to the user: a little is enough.
const shortly = (text: string) => (text.length > 300 ? `${text.slice(0, 300)}…` : text)

/**
 * Reads one answer's events: `step` takes an event, hands the text it
 * carries to `emit` and says what comes next. `taskId` is the remote task,
 * once an event named it.
 */
const answerReader = (sdk: Sdk, emit: (text: string) => void) => {
  const { TaskState } = sdk[0]
  let emitted = false
  let taskId: string | undefined
  const give = (text: string) => {
    if (text === "") return
    emitted = true
    emit(text)
  }
  const statusText = (status: TaskStatus | undefined) => (status?.message === undefined ? "" : textOfParts(status.message.parts))
  const onStatus = (status: TaskStatus | undefined): Step => {
    const text = statusText(status)
    switch (status?.state) {
      case TaskState.TASK_STATE_COMPLETED:
        // An agent may answer in its final status message alone.
        if (!emitted) give(text)
        return end
      case TaskState.TASK_STATE_INPUT_REQUIRED:
      case TaskState.TASK_STATE_AUTH_REQUIRED:
        // The turn is over: the agent asks something back, and the next turn of the context answers it.
        give(emitted && text !== "" ? `\n\n${text}` : text)
        return end
      case TaskState.TASK_STATE_FAILED:
        return { _tag: "Fail", error: agentError(text === "" ? "The agent's task failed" : `The agent's task failed: ${shortly(text)}`, status) }
      case TaskState.TASK_STATE_REJECTED:
        return { _tag: "Fail", error: agentError(text === "" ? "The agent rejected the task" : `The agent rejected the task: ${shortly(text)}`, status) }
      case TaskState.TASK_STATE_CANCELED:
        return { _tag: "Fail", error: agentError("The agent cancelled its task", status) }
      default:
        // Submitted or working: progress notes are not the reply.
        return more
    }
  }
  const onTask = (task: Task): Step => {
    taskId = task.id
    const step = onStatus(task.status)
    // A task that arrives finished carries its answer in its artifacts.
    if (step._tag === "End" && !emitted) {
      give(task.artifacts.map((a) => textOfParts(a.parts)).join(""))
      if (!emitted) give(statusText(task.status))
    }
    return step
  }
  const step = (event: StreamResponse): Step => {
    const payload = event.payload
    switch (payload?.$case) {
      case "message":
        // An answer without a task: the message is the whole reply.
        give(textOfParts((payload.value as Message).parts))
        return end
      case "task":
        return onTask(payload.value)
      case "artifactUpdate":
        taskId ??= payload.value.taskId
        give(textOfParts(payload.value.artifact?.parts ?? []))
        return more
      case "statusUpdate":
        taskId ??= payload.value.taskId
        return onStatus(payload.value.status)
      default:
        return more
    }
  }
  return { step, taskId: () => taskId }
}

/** Configured headers as sent, values unwrapped. */
const headersOf = (config: A2aAgentRuntimeConfig): Record<string, string> =>
  Object.fromEntries(
    Object.entries(config.headers ?? {}).map(([name, value]) => [name, Redacted.isRedacted(value) ? Redacted.value(value) : value])
  )

/**
 * The runtime. Clients (one per card URL, from its card) are kept for
 * `cardTtl` and at most `maxCachedCards` of them; a card that could not be
 * read is asked again at the next reply.
 */
export const make = (config: A2aAgentRuntimeConfig = {}): AgentRuntime.AgentRuntime["Type"] => {
  const cardUrlFor = config.cardUrlFor ?? defaultCardUrl
  const connectTimeout = Duration.decode(config.connectTimeout ?? Duration.seconds(10))
  const idleTimeout = Duration.decode(config.idleTimeout ?? Duration.seconds(60))
  const cardTtl = Duration.toMillis(Duration.decode(config.cardTtl ?? Duration.seconds(60)))
  const cancelTimeout = Duration.toMillis(Duration.decode(config.cancelTimeout ?? Duration.seconds(5)))
  const extraHeaders = headersOf(config)
  const baseFetch = config.fetch ?? globalThis.fetch
  const fetchImpl: typeof fetch = Object.keys(extraHeaders).length === 0 ? baseFetch : (input, init) => {
    const headers = new Headers(init?.headers)
    for (const [name, value] of Object.entries(extraHeaders)) headers.set(name, value)
    return baseFetch(input, { ...init, headers })
  }
  const clients = Recent.make<string, { readonly client: Promise<Client>; readonly until: number }>(maxCachedCards)

  const clientFor = (sdk: Sdk, cardUrl: string): Promise<Client> => {
    const now = Date.now()
    const kept = clients.get(cardUrl)
    if (kept !== undefined && kept.until > now) return kept.client
    clients.delete(cardUrl)
    const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = sdk[1]
    const legacyCompat = { enabled: true }
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl, legacyCompat })
    }))
    const client = factory.createFromUrl(cardUrl, "")
    client.catch(() => {
      if (clients.get(cardUrl)?.client === client) clients.delete(cardUrl)
    })
    clients.set(cardUrl, { client, until: now + cardTtl })
    return client
  }

  const spanOf = (turn: AgentRuntime.Turn) => ({
    attributes: {
      "hosting.deployment_id": turn.deployment.id,
      "hosting.agent": `${turn.deployment.publisher}/${turn.deployment.agent_name}`,
      "hosting.namespace": turn.deployment.namespace,
      "hosting.conversation_id": turn.conversation
    }
  })

  const reply = Effect.fnUntraced(
    function*(turn: AgentRuntime.Turn, emit: (text: string) => void) {
      const endpoint = cardUrlFor(turn.deployment)
      const cardUrl = yield* Option.match(cardUrlOf(endpoint), {
        onNone: () => Effect.fail(agentError("The agent's endpoint is not a valid http(s) URL", new Error(`endpoint: ${endpoint}`))),
        onSome: Effect.succeed
      })
      const span = yield* Tracing.currentSpan
      const traceparent = Option.isSome(span) ? Tracing.traceparentOf(span.value) : undefined
      const sdk = yield* Effect.tryPromise({ try: loadSdk, catch: (error) => agentError("The A2A client could not be loaded", error) })
      return yield* stream(sdk, cardUrl, turn, emit, traceparent)
    },
    (effect, turn) => Tracing.withSpan("A2aAgentRuntime.reply", spanOf(turn))(effect)
  )

  /**
   * The answer to one turn, read in plain code: the stream's events are
   * handed on as they come, a timer watches for silence, and an interrupt
   * aborts the request and cancels the remote task.
   */
  const stream = (sdk: Sdk, cardUrl: string, turn: AgentRuntime.Turn, emit: (text: string) => void, traceparent: string | undefined) =>
    Effect.async<void, AgentRuntime.AgentError>((resume) => {
      const controller = new AbortController()
      let settled = false
      let client: Client | undefined
      const reader = answerReader(sdk, (text) => {
        if (!settled) emit(text)
      })
      /** Best effort: the remote task is asked to stop, once, when the reply stops before the task ended. */
      let cancelSent = false
      const cancelRemote = async () => {
        const id = reader.taskId()
        if (cancelSent || id === undefined || client === undefined) return
        cancelSent = true
        await client.cancelTask({ tenant: "", id, metadata: undefined }, { signal: AbortSignal.timeout(cancelTimeout) }).catch(() => undefined)
      }
      let timer: ReturnType<typeof setTimeout> | undefined
      const settle = (result: Effect.Effect<void, AgentRuntime.AgentError>) => {
        if (settled) return
        settled = true
        if (timer !== undefined) clearTimeout(timer)
        resume(result)
      }
      const fail = (error: AgentRuntime.AgentError) => {
        controller.abort()
        void cancelRemote()
        settle(Effect.fail(error))
      }
      const watch = (duration: Duration.Duration, message: string) => {
        if (timer !== undefined) clearTimeout(timer)
        timer = setTimeout(() => fail(agentError(message)), Duration.toMillis(duration))
      }
      watch(connectTimeout, `The agent did not answer within ${spoken(connectTimeout)}`)
      const run = async (): Promise<void> => {
        try {
          client = await clientFor(sdk, cardUrl)
        } catch (error) {
          return fail(agentError("The agent is not reachable", error))
        }
        if (settled) return
        const { Role } = sdk[0]
        const message: Message = {
          messageId: globalThis.crypto.randomUUID(),
          contextId: turn.conversation,
          taskId: "",
          role: Role.ROLE_USER,
          parts: [{ content: { $case: "text", value: textOf(turn.message) }, metadata: undefined, filename: "", mediaType: "text/plain" }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: []
        }
        const events = client.sendMessageStream(
          {
            tenant: "",
            message,
            configuration: { acceptedOutputModes: ["text/plain"], taskPushNotificationConfig: undefined, returnImmediately: false },
            metadata: undefined
          },
          { signal: controller.signal, ...(traceparent === undefined ? {} : { serviceParameters: { traceparent } }) }
        )
        try {
          for await (const event of events) {
            if (settled) return
            watch(idleTimeout, `The agent stopped answering for ${spoken(idleTimeout)}`)
            const next = reader.step(event)
            if (next._tag === "End") return settle(Effect.void)
            if (next._tag === "Fail") return settle(Effect.fail(next.error))
          }
        } catch (error) {
          return fail(agentError("The agent's reply broke off", error))
        }
        fail(agentError("The agent's reply broke off", new Error("the stream ended before the task did")))
      }
      void run()
      // Interrupted: no chunk after this; the request is cut and the agent asked to stop the task.
      return Effect.promise(() => {
        settled = true
        if (timer !== undefined) clearTimeout(timer)
        controller.abort()
        return cancelRemote()
      })
    })

  return AgentRuntime.AgentRuntime.of({ reply })
}

/** The A2A runtime as a layer. */
export const layer = (config: A2aAgentRuntimeConfig = {}): Layer.Layer<AgentRuntime.AgentRuntime> =>
  Layer.sync(AgentRuntime.AgentRuntime, () => make(config))

/** `layer` with its config read through Effect's `Config` (the environment by default). */
export const layerConfig = (
  config: Config.Config.Wrap<A2aAgentRuntimeConfig>
): Layer.Layer<AgentRuntime.AgentRuntime, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(Config.unwrap(config), layer))
