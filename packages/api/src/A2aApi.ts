/**
 * Every deployment as an Agent2Agent (A2A v1.0) agent: its agent card, and
 * the JSON-RPC binding (SendMessage, SendStreamingMessage, GetTask,
 * CancelTask, SubscribeToTask) at one URL. An A2A context is a
 * conversation; a task is one turn of it.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Deployment } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Forbidden, NotFound } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const deploymentId = HttpApiSchema.param("deploymentId", Deployment.DeploymentId)

/** A JSON document of the protocol (the agent card, a JSON-RPC answer): its schema is A2A's, not ours. */
export const A2aDocument = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "A document of the A2A protocol v1.0 (https://a2a-protocol.org), in its JSON form"
})

/** The path of the agent card under an agent's URL, as A2A clients look for it. */
export const agentCardPath = "/.well-known/agent-card.json"

export class A2aApi extends HttpApiGroup.make("a2a")
  .add(
    HttpApiEndpoint.get("agentCard")`/deployments/${deploymentId}/a2a/.well-known/agent-card.json`
      .addSuccess(A2aDocument)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The deployment's A2A agent card (members of the deploying account)")
      .annotate(
        OpenApi.Description,
        "Name, description and version from the agent's spec, its skills, streaming, the JSON-RPC interface at " +
          "`/deployments/{deploymentId}/a2a` (protocol 1.0) and the bearer security scheme."
      )
  )
  .add(
    HttpApiEndpoint.post("rpc")`/deployments/${deploymentId}/a2a`
      .annotate(RequiredScope, "chat")
      .annotate(BodyLimit, 256 * KiB)
      .addSuccess(A2aDocument)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "A2A JSON-RPC 2.0: SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask")
      .annotate(
        OpenApi.Description,
        "The body is a JSON-RPC request of the A2A protocol; protocol errors (parse error, unknown method, bad params, " +
          "task not found) answer 200 with a JSON-RPC `error`. SendStreamingMessage and SubscribeToTask answer " +
          "`text/event-stream`, one JSON-RPC response per event. The context is a conversation of the caller on this " +
          "deployment, a task one turn of it."
      )
      // The handler reads the JSON-RPC text itself, so that malformed JSON is the protocol's parse error.
      .annotate(OpenApi.Override, {
        requestBody: {
          required: true,
          description: "A JSON-RPC 2.0 request of the A2A protocol v1.0",
          content: { "application/json": { schema: { type: "object" } } }
        }
      })
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "A2A")
  .annotate(OpenApi.Description, "Every deployment as an Agent2Agent (A2A v1.0) agent, over JSON-RPC")
{}
