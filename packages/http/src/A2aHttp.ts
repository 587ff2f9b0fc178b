/**
 * Handlers of the A2A routes: every deployment answers the Agent2Agent
 * protocol (v1.0) over JSON-RPC through the official SDK's request handler,
 * with an executor that turns a task into a turn of the caller's
 * conversation (the A2A context) and the reply's chunks into artifact
 * updates.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Message, Part, Task, TaskState } from "@a2a-js/sdk"
import type { AgentExecutor, ExecutionEventBus, JsonRpcTransportHandler, RequestContext, ServerCallContext, User } from "@a2a-js/sdk/server"
import { A2aApi, HostingApi } from "@hosting/api"
import { Chat, Conversation, type Deployment, Deployments, Ports, Principal } from "@hosting/core"
import { Cause, Deferred, Effect, Exit, Option, Runtime, Schema, Stream } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as A2aTasks from "./A2aTasks.js"
import { load as loadSdk, type Sdk } from "./internal/a2aSdk.js"
import * as ApiRoutes from "./ApiRoutes.js"
import { handle } from "./ErrorMapping.js"
import * as PublicUrl from "./PublicUrl.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** The protocol version this server speaks. */
const protocolVersion = "1.0"

/** The caller, as the SDK's call context carries it: tasks are kept per user. */
class PrincipalUser implements User {
  constructor(readonly principal: Principal.Principal) {}
  get isAuthenticated() {
    return true
  }
  get userName() {
    return this.principal.user.id
  }
}

const principalOf = (context: ServerCallContext) => (context.user as PrincipalUser).principal

const isConversationId = Schema.is(Conversation.ConversationId)

/** The id of a JSON-RPC request, for an answer of ours (null when it has none that JSON-RPC allows). */
const idOf = (request: unknown) => {
  const id = typeof request === "object" && request !== null ? (request as { id?: unknown }).id : undefined
  return typeof id === "string" || typeof id === "number" ? id : null
}

/**
 * The JSON-RPC error for a request that asks (`A2A-Version`) for a protocol
 * version other than the one this agent speaks; undefined when it asks for
 * none (taken as 1.0) or for 1.0.
 */
const versionRefusal = (request: unknown, requested: string | undefined) =>
  requested === undefined || requested.trim() === protocolVersion || requested.trim() === "1"
    ? undefined
    : {
      jsonrpc: "2.0",
      id: idOf(request),
      error: {
        code: -32009,
        message: `Version not supported: this agent speaks A2A ${protocolVersion}, not "${requested.slice(0, 16)}" (the A2A-Version header).`
      }
    }

/**
 * The JSON-RPC error for a message whose context cannot be a conversation
 * (a UUID), checked before the SDK runs anything; undefined when it can.
 */
const contextRefusal = (request: unknown) => {
  if (typeof request !== "object" || request === null) return undefined
  const { method, params } = request as { method?: unknown; params?: { message?: { contextId?: unknown } } }
  if (method !== "SendMessage" && method !== "SendStreamingMessage") return undefined
  const context = params?.message?.contextId
  if (typeof context !== "string" || context === "" || isConversationId(context)) return undefined
  return {
    jsonrpc: "2.0",
    id: idOf(request),
    error: { code: -32602, message: `Invalid params: a context of this agent is a conversation, a UUID, not "${context.slice(0, 64)}".` }
  }
}

/** The path of a file's content in this API, for a `url` part that names one of ours by its address. */
const fileContentPath = /\/deployments\/[^/]+\/files\/([^/?#]+)\/content(?:[?#]|$)/

/**
 * The attachments of a message: each `url` part names a file of the
 * caller's by its key (as reserving it answered), or by the address of its
 * content in this API. The send checks them as it checks our send route's.
 */
const attachmentsOf = (parts: ReadonlyArray<Part>) =>
  parts.flatMap((part) => {
    if (part.content?.$case !== "url") return []
    const value = part.content.value
    const addressed = fileContentPath.exec(value)
    if (addressed === null) return [{ key: value }]
    try {
      return [{ key: decodeURIComponent(addressed[1]!) }]
    } catch {
      return [{ key: value }]
    }
  })

const textPart = (text: string): Part => ({ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" })

const agentMessage = (sdk: Sdk, task: string, context: string, text: string): Message => ({
  messageId: globalThis.crypto.randomUUID(),
  contextId: context,
  taskId: task,
  role: sdk.Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const status = (state: TaskState, message?: Message) => ({ state, message, timestamp: new Date().toISOString() })

/** The agent card of a deployment, from its spec, in the protocol's JSON form: what A2A clients read first. */
export const agentCardJson = (deployment: Deployment.Deployment, agentUrl: string) => {
  const spec = deployment.spec
  const text = (key: string) => (typeof spec[key] === "string" ? (spec[key] as string) : undefined)
  const declared = Array.isArray(spec["skills"]) ? (spec["skills"] as Array<unknown>) : []
  const skills = declared.flatMap((skill, index) => {
    if (typeof skill !== "object" || skill === null) return []
    const s = skill as Record<string, unknown>
    const str = (key: string, fallback: string) => (typeof s[key] === "string" ? (s[key] as string) : fallback)
    const list = (key: string) => (Array.isArray(s[key]) ? (s[key] as Array<unknown>).filter((t): t is string => typeof t === "string") : [])
    return [{
      id: str("id", `skill-${index + 1}`),
      name: str("name", str("id", `Skill ${index + 1}`)),
      description: str("description", ""),
      tags: list("tags"),
      examples: list("examples")
    }]
  })
  return {
    name: text("name") ?? deployment.agent_name,
    description: text("description") ?? `The agent ${deployment.agent}, deployed as ${deployment.id}.`,
    version: text("version") ?? deployment.build_id,
    supportedInterfaces: [{ url: agentUrl, protocolBinding: "JSONRPC", protocolVersion }],
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "bearer", description: "A token of the hosting service" } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: skills.length > 0
      ? skills
      : [{ id: "chat", name: "Chat", description: "Send a message; the agent replies.", tags: ["chat"], examples: [] }]
  }
}

/** The path of a deployment's route. */
interface DeploymentPath {
  readonly deploymentId: Deployment.DeploymentId
}

/** The JSON-RPC route: the agent's URL in its card. */
const rpcRoute = ApiRoutes.routeOf(A2aApi.A2aApi, "rpc")

/** The JSON-RPC answer to a body that is not JSON (the SDK would call it invalid params). */
const parseError = (error: unknown) => ({
  jsonrpc: "2.0",
  id: null,
  error: { code: -32700, message: `Parse error: the body is not JSON (${error instanceof Error ? error.message : String(error)}).` }
})

export const layerWith = (options: PublicUrl.PublicUrlOptions) => ApiApp.group(HostingApi.HostingApi, "a2a", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* Chat.Chat
    const deployments = yield* Deployments.Deployments
    const runtime = yield* Effect.runtime<never>()
    const run = Runtime.runPromiseExit(runtime)
    // Tasks in storage when the server keeps them (every process, after a restart), else in this process's memory.
    const durable = yield* Effect.serviceOption(Ports.A2aTaskStore)
    const ownerOf = (context: ServerCallContext) => (context.user?.isAuthenticated === true ? context.user.userName : undefined)
    const taskStoreOf = (sdk: Sdk, deploymentId: Deployment.DeploymentId) =>
      Option.match(durable, {
        onNone: () => new sdk.InMemoryTaskStore(),
        onSome: (store) => A2aTasks.taskStoreFor(sdk, store, deploymentId, ownerOf, Runtime.runPromise(runtime))
      })

    /** A task's conversation and caller, for a cancel. */
    const tasks = new Map<string, {
      readonly deployment: Deployment.DeploymentId
      readonly conversation: Conversation.ConversationId
      readonly principal: Principal.Principal
    }>()

    /** Runs a turn for a task: the user's text to the conversation, the reply's chunks back as they arrive. */
    const executorFor = (sdk: Sdk, deploymentId: Deployment.DeploymentId): AgentExecutor => ({
      execute: async (request: RequestContext, bus: ExecutionEventBus) => {
        const principal = principalOf(request.context)
        const text = request.userMessage.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("")
        // Checked by the route before the SDK runs: a context here is a UUID.
        const conversation = request.contextId as Conversation.ConversationId
        // The message's id makes a resent message idempotent, as client_message_id does for our send route.
        const sent = await run(chat.send(principal, deploymentId, conversation, {
          content: text,
          attachments: attachmentsOf(request.userMessage.parts),
          client_message_id: request.userMessage.messageId === "" ? undefined : request.userMessage.messageId
        }))
        if (Exit.isFailure(sent)) {
          // Refused as a send is refused (another user's conversation, the message limit, a reply in progress): the task says why.
          const failure = Cause.failureOption(sent.cause)
          const why = Option.isSome(failure) ? failure.value.message : "The message could not be sent."
          bus.publish({
            kind: "task",
            data: {
              id: request.taskId,
              contextId: request.contextId,
              status: status(sdk.TaskState.TASK_STATE_REJECTED, agentMessage(sdk, request.taskId, request.contextId, why)),
              artifacts: [],
              history: [request.userMessage],
              metadata: undefined
            }
          })
          bus.finished()
          return
        }
        tasks.set(request.taskId, { deployment: deploymentId, conversation, principal })
        const task: Task = {
          id: request.taskId,
          contextId: request.contextId,
          status: status(sdk.TaskState.TASK_STATE_WORKING),
          artifacts: [],
          history: [request.userMessage],
          metadata: { message_id: sent.value.message_id }
        }
        bus.publish({ kind: "task", data: task })
        let reply: string | undefined
        let chunks = 0
        // Without a generator, which would be a new generator function for every task (docs/decisions.md,
        // "Generator functions made once").
        const followed = await run(Effect.scoped(Effect.flatMap(Deferred.make<void>(), (done) =>
          Effect.zipRight(
            chat.follow(principal, deploymentId, conversation, Option.none(), {
              push: (items) => {
                for (const item of items) {
                  if (item._tag === "Heartbeat") continue
                  reply ??= item.message_id
                  if (item.message_id !== reply) continue
                  if (item._tag === "Delta") {
                    bus.publish({
                      kind: "artifactUpdate",
                      data: {
                        taskId: request.taskId,
                        contextId: request.contextId,
                        artifact: { artifactId: reply, name: "reply", description: "", parts: [textPart(item.delta)], metadata: undefined, extensions: [] },
                        append: chunks++ > 0,
                        lastChunk: false,
                        metadata: undefined
                      }
                    })
                  } else if (item._tag === "Completed") {
                    bus.publish({
                      kind: "statusUpdate",
                      data: {
                        taskId: request.taskId,
                        contextId: request.contextId,
                        status: status(sdk.TaskState.TASK_STATE_COMPLETED, agentMessage(sdk, request.taskId, request.contextId, item.content)),
                        metadata: undefined
                      }
                    })
                    Deferred.unsafeDone(done, Exit.void)
                  } else {
                    const cancelled = /cancel/i.test(item.error)
                    bus.publish({
                      kind: "statusUpdate",
                      data: {
                        taskId: request.taskId,
                        contextId: request.contextId,
                        status: status(
                          cancelled ? sdk.TaskState.TASK_STATE_CANCELED : sdk.TaskState.TASK_STATE_FAILED,
                          agentMessage(sdk, request.taskId, request.contextId, item.error)
                        ),
                        metadata: undefined
                      }
                    })
                    Deferred.unsafeDone(done, Exit.void)
                  }
                }
                return true
              },
              end: () => Deferred.unsafeDone(done, Exit.void)
            }),
            Deferred.await(done)
          ))))
        tasks.delete(request.taskId)
        if (Exit.isFailure(followed)) {
          bus.publish({
            kind: "statusUpdate",
            data: { taskId: request.taskId, contextId: request.contextId, status: status(sdk.TaskState.TASK_STATE_FAILED), metadata: undefined }
          })
        }
        bus.finished()
      },
      cancelTask: async (taskId: string) => {
        const running = tasks.get(taskId)
        if (running === undefined) return
        await run(chat.cancel(running.principal, running.deployment, running.conversation))
      }
    })

    /**
     * A CancelTask of a stored task that runs on another process: its reply
     * is cancelled here (the cancel reaches the process running it, as our
     * cancel route's does), and the answer is the task as that process
     * records its end (within 5 s). `None`: the SDK answers (a task of this
     * process, which its executor cancels; an unknown or ended one).
     */
    const cancelElsewhere = Effect.fnUntraced(
      function*(sdk: Sdk, principal: Principal.Principal, deploymentId: Deployment.DeploymentId, request: unknown) {
        if (Option.isNone(durable) || typeof request !== "object" || request === null) return Option.none<string>()
        const { method, params } = request as { method?: unknown; params?: { id?: unknown } }
        const taskId = params?.id
        if (method !== "CancelTask" || typeof taskId !== "string" || tasks.has(taskId)) return Option.none<string>()
        const store = durable.value
        const found = yield* store.find(deploymentId, principal.user.id, taskId)
        if (Option.isNone(found) || !A2aTasks.isRunning(sdk, found.value) || !isConversationId(found.value.context_id)) {
          return Option.none<string>()
        }
        yield* Effect.ignore(chat.cancel(principal, deploymentId, found.value.context_id))
        for (let wait = 0; wait < 100; wait++) {
          const now = yield* store.find(deploymentId, principal.user.id, taskId)
          if (Option.isSome(now) && !A2aTasks.isRunning(sdk, now.value)) return Option.some(now.value.task)
          yield* Effect.sleep("50 millis")
        }
        return Option.none<string>()
      },
      Effect.orElseSucceed(() => Option.none<string>())
    )

    /** One request handler per deployment (its tasks kept per caller), made at the first call. */
    const handlers_ = new Map<Deployment.DeploymentId, JsonRpcTransportHandler>()
    const transportFor = (sdk: Sdk, deployment: Deployment.Deployment, agentUrl: string) => {
      let transport = handlers_.get(deployment.id)
      if (transport === undefined) {
        const card = sdk.AgentCard.fromJSON(agentCardJson(deployment, agentUrl))
        transport = new sdk.JsonRpcTransportHandler(new sdk.DefaultRequestHandler(card, taskStoreOf(sdk, deployment.id), executorFor(sdk, deployment.id)))
        handlers_.set(deployment.id, transport)
      }
      return transport
    }

    const agentUrlOf = (request: HttpServerRequest.HttpServerRequest, deploymentId: Deployment.DeploymentId) =>
      ApiRoutes.link(PublicUrl.baseOf(request, options), rpcRoute, { deploymentId })

    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const agentCard = Effect.fnUntraced(function*(path: DeploymentPath) {
      const principal = yield* Principal.CurrentPrincipal
      const request = yield* HttpServerRequest.HttpServerRequest
      const deployment = yield* handle(deployments.get(principal, path.deploymentId))
      const { AgentCard } = yield* loadSdk
      return AgentCard.toJSON(AgentCard.fromJSON(agentCardJson(deployment, agentUrlOf(request, path.deploymentId)))) as Record<string, unknown>
    })
    const rpc = Effect.fnUntraced(function*(path: DeploymentPath) {
      const principal = yield* Principal.CurrentPrincipal
      const request = yield* HttpServerRequest.HttpServerRequest
      const deployment = yield* handle(deployments.get(principal, path.deploymentId))
      const body = yield* Effect.orElseSucceed(request.text, () => "")
      const version = request.headers["a2a-version"]
      // Negotiated above (versionRefusal): what reaches the SDK is a request for the one version spoken.
      const loaded = yield* loadSdk
      const context = new loaded.ServerCallContext({ user: new PrincipalUser(principal), requestedVersion: protocolVersion })
      const parsed = yield* Effect.try({ try: () => JSON.parse(body) as unknown, catch: (error) => error }).pipe(Effect.either)
      if (parsed._tag === "Left") return JsonAnswer.json(parseError(parsed.left))
      const refused = versionRefusal(parsed.right, version) ?? contextRefusal(parsed.right)
      if (refused !== undefined) return JsonAnswer.json(refused)
      const transport = transportFor(loaded, deployment, agentUrlOf(request, path.deploymentId))
      const cancelled = yield* cancelElsewhere(loaded, principal, deployment.id, parsed.right)
      if (Option.isSome(cancelled)) {
        return JsonAnswer.json({ jsonrpc: "2.0", id: idOf(parsed.right), result: JSON.parse(cancelled.value) })
      }
      const answer = yield* Effect.promise(() => transport.handle(parsed.right as Record<string, unknown>, context))
      if (Symbol.asyncIterator in answer) {
        // A failure of the stream (a task that does not exist) is the stream's last event, as a JSON-RPC error.
        const frames = Stream.fromAsyncIterable(answer, (error) => error).pipe(
          Stream.catchAll((error) =>
            Stream.make({ jsonrpc: "2.0", id: idOf(parsed.right), error: loaded.JsonRpcTransportHandler.mapToJSONRPCError(error) })
          ),
          Stream.map((response) => `data: ${JSON.stringify(response)}\n\n`),
          Stream.encodeText
        )
        return HttpServerResponse.stream(frames, {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      }
      return JsonAnswer.json(answer)
    })

    return handlers
      .handle("agentCard", ({ path }) => agentCard(path))
      .handle("rpc", ({ path }) => rpc(path))
  }))

