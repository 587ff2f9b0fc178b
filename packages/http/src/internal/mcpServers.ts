/**
 * The two MCP servers, made per request for one caller: a deployment's
 * (the tool `send_message`: one turn of the caller's conversation, its reply
 * followed as it streams) and the catalog's (the caller's deployments as
 * resources). Protocol errors are the SDK's JSON-RPC errors; a send the
 * conversation rules refuse is a tool result with `isError`.
 */
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { ChatApi } from "@hosting/api"
import { Chat, Conversation, Deployment, type Deployments, type Principal, Text } from "@hosting/core"
import { Cause, Effect, Either, Exit, Option, ParseResult, Runtime, Schema, Stream } from "effect"
import { internalDetails, storageDetails } from "../ErrorMapping.js"
import type { Sdk } from "./mcpSdk.js"

/** The name of the one tool of a deployment's server. */
export const toolName = "send_message"

/** How many resources one page of `resources/list` holds. */
const pageSize = 100

/** The protocol's code for a resource that does not exist (or that the caller may not see). */
const resourceNotFound = -32002

/** The arguments of `send_message`, as its input schema says. */
const SendArguments = Schema.Struct({
  // As the send route takes a message's content: no NUL (no storage could keep it), at most its length.
  message: Text.Text.pipe(Schema.maxLength(ChatApi.maxContentLength)),
  conversation_id: Schema.optional(Conversation.ConversationId)
}).annotations({ parseOptions: { onExcessProperty: "error" } })

const decodeArguments = Schema.decodeUnknownEither(SendArguments)

const inputSchema = {
  type: "object" as const,
  properties: {
    message: { type: "string", minLength: 1, maxLength: ChatApi.maxContentLength, description: "The message to the agent (a user turn)" },
    conversation_id: {
      type: "string",
      format: "uuid",
      description: "The conversation to continue: the conversation_id of an earlier answer (a new UUID starts that conversation). " +
        "Leave it out to start a new conversation."
    }
  },
  required: ["message"],
  additionalProperties: false
}

const outputSchema = {
  type: "object" as const,
  properties: {
    reply: { type: "string", description: "The agent's whole reply" },
    conversation_id: { type: "string", description: "The conversation of this turn; pass it to continue it" },
    message_id: { type: "string", description: "The id of the stored reply" }
  },
  required: ["reply", "conversation_id", "message_id"]
}

/** What the server says of itself in `initialize`. */
const serverInfo = (name: string, version: string) => ({ name, version })

/** A refused send or a reply that did not complete: the caller reads why in the result. */
const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] })

/** A failure of the storage is not the caller's to read: the protocol's internal error, without the cause. */
const internal = (sdk: Sdk) => new sdk.McpError(sdk.ErrorCode.InternalError, storageDetails)

/**
 * The protocol's error for a call that failed: interrupted (the client went
 * away, the server stops), the storage (as the API says it), or a bug, which
 * is logged and not shown.
 */
const failed = <E>(sdk: Sdk, runtime: Runtime.Runtime<never>, cause: Cause.Cause<E>) => {
  if (Cause.isInterruptedOnly(cause)) return new sdk.McpError(sdk.ErrorCode.InternalError, "The call was stopped.")
  if (Option.isSome(Cause.failureOption(cause))) return internal(sdk)
  Runtime.runFork(runtime)(Effect.logError("An MCP call failed", cause))
  return new sdk.McpError(sdk.ErrorCode.InternalError, internalDetails)
}

interface DeploymentServerOptions {
  readonly deployment: Deployment.Deployment
  readonly principal: Principal.Principal
  readonly chat: Chat.Chat
  readonly runtime: Runtime.Runtime<never>
}

/** A deployment's server: `tools/list` and `tools/call` of `send_message`. */
export const deploymentServer = (sdk: Sdk, options: DeploymentServerOptions): Server => {
  const { chat, deployment, principal } = options
  const server = new sdk.Server(serverInfo(deployment.agent, deployment.build_id), {
    capabilities: { tools: {} },
    instructions: `The agent ${deployment.agent}, deployed as ${deployment.id}. Call ${toolName} to talk to it.`
  })
  const spec = deployment.spec
  const described = typeof spec["description"] === "string" ? ` (${spec["description"].slice(0, 300)})` : ""

  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({
    tools: [{
      name: toolName,
      title: `Send a message to ${deployment.agent}`,
      description: `Sends a message to the agent ${deployment.agent}${described} and answers its reply, with the conversation ` +
        "id: pass it as conversation_id to continue the conversation.",
      inputSchema,
      outputSchema,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
    }]
  }))

  server.setRequestHandler(sdk.CallToolRequestSchema, async (request, extra) => {
    if (request.params.name !== toolName) {
      throw new sdk.McpError(sdk.ErrorCode.InvalidParams, `Unknown tool "${request.params.name.slice(0, 64)}": this server has one tool, ${toolName}.`)
    }
    const decoded = decodeArguments(request.params.arguments ?? {})
    if (Either.isLeft(decoded)) {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
        .map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`).join("; ")
      throw new sdk.McpError(
        sdk.ErrorCode.InvalidParams,
        `Invalid arguments of ${toolName} (message is a string, conversation_id an optional conversation's UUID, nothing else): ${issues.slice(0, 500)}`
      )
    }
    const progressToken = request.params._meta?.progressToken
    const progress = (received: number, delta: string) =>
      progressToken === undefined ? Effect.void : Effect.ignore(Effect.tryPromise(() =>
        extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: received, message: delta } })
      ))
    const conversation = decoded.right.conversation_id ?? Conversation.ConversationId.make(globalThis.crypto.randomUUID())
    const turn = sendAndFollow(chat, principal, deployment.id, conversation, decoded.right.message, progress)
    const exit = await Runtime.runPromiseExit(options.runtime)(turn, { signal: extra.signal })
    if (Exit.isSuccess(exit)) return exit.value
    throw failed(sdk, options.runtime, exit.cause)
  })
  return server
}

/** How a turn ended: the reply's text, or why it did not complete. */
type TurnEnd =
  | { readonly _tag: "Completed"; readonly message_id: string; readonly content: string }
  | { readonly _tag: "Failed"; readonly error: string }

/**
 * One turn: the message sent as `POST .../messages` sends it (the same use
 * case and rules), then its reply followed to its end, each chunk reported.
 * The reply is known by its id (the assistant message stored after the
 * user's), so that a reply of an earlier turn still streaming (`queue`) is
 * not taken for it; a reply that ended before the stream opened is read
 * from the history, which each heartbeat reads again. Fails only with a
 * storage failure; a refusal is a tool error.
 */
const sendAndFollow = Effect.fnUntraced(function*(
  chat: Chat.Chat,
  principal: Principal.Principal,
  deploymentId: Deployment.DeploymentId,
  conversation: Conversation.ConversationId,
  message: string,
  progress: (received: number, delta: string) => Effect.Effect<void>
) {
  const sent = yield* Effect.either(chat.send(principal, deploymentId, conversation, { content: message }))
  if (Either.isLeft(sent)) {
    if (sent.left._tag === "StorageError") return yield* sent.left
    return toolError(sent.left.message)
  }
  const stored = (history: ReadonlyArray<Conversation.Message>) => {
    const at = history.findIndex((m) => m.message_id === sent.right.message_id)
    return history.slice(at + 1).find((m) => m.role === "assistant")
  }
  const endOf = (reply: Conversation.Message | undefined): Option.Option<TurnEnd> => {
    if (reply === undefined || reply.status === "streaming") return Option.none()
    return Option.some(reply.status === "complete"
      ? { _tag: "Completed", message_id: reply.message_id, content: reply.content }
      : { _tag: "Failed", error: reply.status === "cancelled" ? "the reply was cancelled" : "the agent failed" })
  }
  const storedEnd = Effect.map(chat.history(principal, deploymentId, conversation), (history) => endOf(stored(history)))
  const reply = stored(yield* chat.history(principal, deploymentId, conversation))
  let end = endOf(reply)
  if (Option.isNone(end) && reply !== undefined) {
    let received = 0
    const items = Chat.stream(chat, principal, deploymentId, conversation, Option.none()).pipe(
      Stream.mapEffect((item): Effect.Effect<Option.Option<TurnEnd>, Effect.Effect.Error<typeof storedEnd>> => {
        if (item._tag === "Heartbeat") return storedEnd
        if (item.message_id !== reply.message_id) return Effect.succeed(Option.none())
        if (item._tag === "Completed") return Effect.succeed(Option.some({ _tag: "Completed", message_id: item.message_id, content: item.content }))
        if (item._tag === "Failed") return Effect.succeed(Option.some({ _tag: "Failed", error: item.error }))
        if (item.delta === "") return Effect.succeed(Option.none())
        received += item.delta.length
        return Effect.as(progress(received, item.delta), Option.none())
      }),
      Stream.filterMap((ended) => ended),
      Stream.take(1)
    )
    const followed = yield* Effect.either(Stream.runHead(items))
    if (Either.isLeft(followed)) {
      if (followed.left._tag === "StorageError") return yield* followed.left
      return toolError(followed.left.message)
    }
    end = followed.right
  }
  const continues = `conversation_id: ${conversation} (pass it to continue this conversation)`
  if (Option.isSome(end) && end.value._tag === "Completed") {
    const result: CallToolResult = {
      content: [{ type: "text", text: end.value.content }, { type: "text", text: continues }],
      structuredContent: { reply: end.value.content, conversation_id: conversation, message_id: end.value.message_id }
    }
    return result
  }
  const why = Option.isSome(end) && end.value._tag === "Failed" ? end.value.error : "the reply stream ended before the reply"
  return toolError(`The agent's reply did not complete (${why}). ${continues}`)
})

interface CatalogServerOptions {
  readonly principal: Principal.Principal
  readonly deployments: Deployments.Deployments
  readonly runtime: Runtime.Runtime<never>
  /** The URL of a deployment's record, and the URLs of its protocols. */
  readonly urls: (id: Deployment.DeploymentId) => {
    readonly record: string
    readonly mcp: string
    readonly a2a: string
    readonly agentCard: string
  }
  /** The URL template of a deployment's record (`{deploymentId}` in place of the id). */
  readonly template: string
  /** The record as the API shows it (its links). */
  readonly linked: (deployment: Deployment.Deployment) => Deployment.Deployment
}

const isDeploymentId = Schema.is(Deployment.DeploymentId)

const encodeDeployment = Schema.encodeSync(Deployment.Deployment)

/** The catalog's server: the caller's live deployments as resources, each read as its record and its URLs. */
export const catalogServer = (sdk: Sdk, options: CatalogServerOptions): Server => {
  const { deployments, principal } = options
  const run = <A, E>(effect: Effect.Effect<A, E>, signal: AbortSignal) => Runtime.runPromiseExit(options.runtime)(effect, { signal })
  const server = new sdk.Server(serverInfo("hosting-catalog", "1.0.0"), {
    capabilities: { resources: {} },
    instructions: "The deployments you may use, as resources: read one for its MCP server's URL and its A2A agent card."
  })

  server.setRequestHandler(sdk.ListResourcesRequestSchema, async (request, extra) => {
    const cursor = request.params?.cursor
    if (cursor !== undefined && !isDeploymentId(cursor)) {
      throw new sdk.McpError(sdk.ErrorCode.InvalidParams, "Invalid cursor: pass the nextCursor of an earlier page.")
    }
    const exit = await run(deployments.listLive(principal, cursor, pageSize + 1), extra.signal)
    if (Exit.isFailure(exit)) throw failed(sdk, options.runtime, exit.cause)
    const page = exit.value.slice(0, pageSize)
    return {
      resources: page.map((d) => ({
        uri: options.urls(d.id).record,
        name: d.id,
        title: `${d.agent} (${d.id})`,
        description: `The agent ${d.agent}, build ${d.build_id}, deployed by ${d.account} into ${d.namespace}: ${d.status}.`,
        mimeType: "application/json"
      })),
      ...(exit.value.length > pageSize ? { nextCursor: page[page.length - 1]!.id } : {})
    }
  })

  server.setRequestHandler(sdk.ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{
      uriTemplate: options.template,
      name: "deployment",
      title: "A deployment",
      description: "A deployment of an account you are a member of: its record and the URLs of its MCP server and A2A agent.",
      mimeType: "application/json"
    }]
  }))

  server.setRequestHandler(sdk.ReadResourceRequestSchema, async (request, extra) => {
    const uri = request.params.uri
    const prefix = options.template.replace("{deploymentId}", "")
    const id = uri.startsWith(prefix) ? decodeURIComponent(uri.slice(prefix.length)) : ""
    const notFound = () => new sdk.McpError(resourceNotFound, `Resource not found: ${uri.slice(0, 200)}`, { uri: uri.slice(0, 200) })
    if (!isDeploymentId(id)) throw notFound()
    const exit = await run(Effect.either(deployments.get(principal, id)), extra.signal)
    if (Exit.isFailure(exit)) throw failed(sdk, options.runtime, exit.cause)
    if (Either.isLeft(exit.value)) {
      if (exit.value.left._tag === "StorageError") throw internal(sdk)
      throw notFound()
    }
    const urls = options.urls(id)
    const document = {
      deployment: encodeDeployment(options.linked(exit.value.right)),
      mcp_url: urls.mcp,
      a2a_url: urls.a2a,
      agent_card_url: urls.agentCard
    }
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(document, null, 2) }] }
  })
  return server
}
