/**
 * The MCP SDK, loaded at the first MCP request (its server, its validator
 * and zod are several MB of memory a server never asked over MCP does not
 * pay for), and the bridge between our request and response and the SDK's
 * web-standard streamable HTTP transport (stateless: one transport and one
 * server per request: no session id generator).
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { Effect, Stream } from "effect"

type ServerModule = typeof import("@modelcontextprotocol/sdk/server/index.js")
type TransportModule = typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")
type TypesModule = typeof import("@modelcontextprotocol/sdk/types.js")

/** The parts of the SDK this server uses. */
export interface Sdk {
  readonly Server: ServerModule["Server"]
  readonly Transport: TransportModule["WebStandardStreamableHTTPServerTransport"]
  readonly McpError: TypesModule["McpError"]
  readonly ErrorCode: TypesModule["ErrorCode"]
  readonly ListToolsRequestSchema: TypesModule["ListToolsRequestSchema"]
  readonly CallToolRequestSchema: TypesModule["CallToolRequestSchema"]
  readonly ListResourcesRequestSchema: TypesModule["ListResourcesRequestSchema"]
  readonly ReadResourceRequestSchema: TypesModule["ReadResourceRequestSchema"]
  readonly ListResourceTemplatesRequestSchema: TypesModule["ListResourceTemplatesRequestSchema"]
}

let loading: Promise<Sdk> | undefined

/** The SDK, imported once, when first needed. */
export const load: Effect.Effect<Sdk> = Effect.promise(() =>
  loading ??= Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ]).then(([server, transport, types]) => ({
    Server: server.Server,
    Transport: transport.WebStandardStreamableHTTPServerTransport,
    McpError: types.McpError,
    ErrorCode: types.ErrorCode,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListResourcesRequestSchema: types.ListResourcesRequestSchema,
    ReadResourceRequestSchema: types.ReadResourceRequestSchema,
    ListResourceTemplatesRequestSchema: types.ListResourceTemplatesRequestSchema
  }))
)

/** Headers of ours that do not go on to the SDK's answer (the server frames the body itself). */
const framing = new Set(["content-type", "content-length", "connection", "transfer-encoding"])

/**
 * Serves one request with a server made for it: the body (already read,
 * within the route's limit) goes to a fresh stateless transport, and the
 * transport's answer comes back as ours. A streamed answer (SSE) closes the
 * server when it ends or when the client goes away, which stops the tool
 * calls still running; any other answer closes it at once.
 */
export const serve = Effect.fnUntraced(function*(sdk: Sdk, server: Server, body: string) {
  const request = yield* HttpServerRequest.HttpServerRequest
  const transport = new sdk.Transport({ enableJsonResponse: false })
  const close = Effect.promise(() => server.close().catch(() => undefined))
  yield* Effect.promise(() => server.connect(transport))
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value)
  // The transport reads only the method, the headers and the body; the URL is a placeholder of the right shape.
  const web = new Request("http://localhost/mcp", { method: "POST", headers, body })
  const answer = yield* Effect.promise(() => transport.handleRequest(web)).pipe(Effect.onInterrupt(() => close))
  const kept: Record<string, string> = {}
  answer.headers.forEach((value, name) => {
    if (!framing.has(name)) kept[name] = value
  })
  const contentType = answer.headers.get("content-type") ?? undefined
  if (answer.body !== null && contentType?.startsWith("text/event-stream") === true) {
    const frames = Stream.fromReadableStream({ evaluate: () => answer.body!, onError: (error) => error }).pipe(Stream.ensuring(close))
    return HttpServerResponse.stream(frames, { status: answer.status, headers: kept, contentType })
  }
  const text = yield* Effect.promise(() => answer.text())
  yield* close
  return text === ""
    ? HttpServerResponse.empty({ status: answer.status, headers: kept })
    : HttpServerResponse.text(text, { status: answer.status, headers: kept, ...(contentType === undefined ? {} : { contentType }) })
})
