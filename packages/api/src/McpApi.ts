/**
 * The Model Context Protocol (MCP) over streamable HTTP, stateless: every
 * deployment is an MCP server with one tool, `send_message` (a turn of the
 * caller's conversation), and the catalog is an MCP server listing the
 * caller's deployments as resources. Each POST carries JSON-RPC messages;
 * there is no session and no stream to open with GET (405).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Deployment } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Forbidden, MethodNotAllowed, NotFound } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const deploymentId = HttpApiSchema.param("deploymentId", Deployment.DeploymentId)

/** A JSON-RPC message of the protocol: its schema is MCP's, not ours. */
export const McpDocument = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "A JSON-RPC 2.0 message of the Model Context Protocol (https://modelcontextprotocol.io), in its JSON form"
})

type Json = Record<string, any>

/** The protocol's error answer: the transport refuses a request before any method runs. */
const jsonRpcError: Json = {
  type: "object",
  description: "A JSON-RPC 2.0 error response of the protocol's transport",
  required: ["jsonrpc", "error"],
  properties: {
    jsonrpc: { type: "string", enum: ["2.0"] },
    id: { type: ["string", "number", "null"] },
    error: {
      type: "object",
      required: ["code", "message"],
      properties: { code: { type: "integer" }, message: { type: "string" }, data: {} }
    }
  }
}

/**
 * What the generated operation cannot say by itself: a 200 is JSON or a
 * `text/event-stream` of JSON-RPC messages, and the transport's own refusals
 * (a body that is not JSON-RPC, a wrong `Accept` or `Content-Type`, an
 * unsupported `MCP-Protocol-Version`) are JSON-RPC errors, not `{error, details}`.
 */
const describeTransport = (operation: Json): Json => {
  const responses: Json = operation["responses"] ?? {}
  const ok = responses["200"]
  if (ok !== undefined) {
    ok.content = { ...ok.content, "text/event-stream": { schema: { type: "string", description: "One JSON-RPC message per `data:` frame" } } }
  }
  const bad = responses["400"]?.content?.["application/json"]
  if (bad?.schema !== undefined) bad.schema = { anyOf: [...(bad.schema.anyOf ?? [bad.schema]), jsonRpcError] }
  responses["406"] = { description: "Not acceptable: `Accept` must name application/json and text/event-stream", content: { "application/json": { schema: jsonRpcError } } }
  responses["415"] = { description: "The body must be application/json", content: { "application/json": { schema: jsonRpcError } } }
  operation["requestBody"] = {
    required: true,
    description: "A JSON-RPC 2.0 message (or a batch) of the Model Context Protocol",
    content: { "application/json": { schema: { anyOf: [{ type: "object" }, { type: "array", items: { type: "object" } }] } } }
  }
  return operation
}

const noStreamSummary = "405: the server is stateless and offers no stream to open with GET (MCP streamable HTTP)"

export class McpApi extends HttpApiGroup.make("mcp")
  .add(
    HttpApiEndpoint.post("deployment")`/deployments/${deploymentId}/mcp`
      .annotate(BodyLimit, 256 * KiB)
      .addSuccess(McpDocument)
      .addSuccess(HttpApiSchema.Empty(202))
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Transform, describeTransport)
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Summary, "The deployment as an MCP server: the tool send_message (members of the deploying account)")
      .annotate(
        OpenApi.Description,
        "MCP over streamable HTTP, stateless. `tools/list` names one tool, `send_message` (`message`, optional " +
          "`conversation_id`), which sends the message to the agent as the caller, as `POST .../messages` does, and " +
          "answers the reply with the conversation id; `notifications/progress` follow the reply when the call " +
          "carries a progress token. A refused send is a tool result with `isError: true`; protocol errors are JSON-RPC errors."
      )
  )
  .add(
    HttpApiEndpoint.get("deploymentStream")`/deployments/${deploymentId}/mcp`
      // The one answer, to a caller who may see the server: documented as what it is, a 405.
      .addSuccess(MethodNotAllowed, { status: 405 })
      .addError(BadRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, noStreamSummary)
  )
  .add(
    HttpApiEndpoint.post("catalog")`/mcp`
      .annotate(BodyLimit, 256 * KiB)
      .addSuccess(McpDocument)
      .addSuccess(HttpApiSchema.Empty(202))
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Transform, describeTransport)
      .annotate(RequiredScope, "read")
      .annotate(OpenApi.Summary, "The catalog as an MCP server: the caller's deployments as resources")
      .annotate(
        OpenApi.Description,
        "MCP over streamable HTTP, stateless. `resources/list` lists the live deployments of the caller's accounts; " +
          "`resources/read` of one gives its record with the URLs of its MCP server and A2A agent card."
      )
  )
  .add(
    HttpApiEndpoint.get("catalogStream")`/mcp`
      // The one answer, to a caller who may see the server: documented as what it is, a 405.
      .addSuccess(MethodNotAllowed, { status: 405 })
      .addError(BadRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, noStreamSummary)
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "MCP")
  .annotate(OpenApi.Description, "Every deployment as a Model Context Protocol server, and the catalog as one, over streamable HTTP")
{}
