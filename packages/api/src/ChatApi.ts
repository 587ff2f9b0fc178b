/**
 * Chat with a deployed agent: conversations, titles, messages, the reply
 * stream, cancellation and history.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Conversation, Deployment, Text } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound, PayloadTooLarge } from "./ApiErrors.js"
import { EventStream, EventsHeaders, EventsParams } from "./AccountsApi.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const deploymentId = HttpApiSchema.param("deploymentId", Deployment.DeploymentId)
const conversationId = HttpApiSchema.param("conversationId", Conversation.ConversationId)

/** Longest message text accepted, in characters. */
export const maxContentLength = 100_000

export const ListResponse = Schema.Struct({ conversations: Schema.Array(Conversation.ConversationSummary) })

export const TitleRequest = Schema.Struct({ title: Conversation.Title })
export const TitleResponse = Schema.Struct({ conversation_id: Conversation.ConversationId, title: Schema.String })

export const SendRequest = Schema.Struct({
  content: Schema.optional(Text.Text.pipe(Schema.maxLength(maxContentLength))),
  // More than the per-message limit is a 413 from the use case; this bound only stops absurd bodies.
  attachments: Schema.optional(Schema.Array(Schema.Struct({ key: Text.Text.pipe(Schema.minLength(1), Schema.maxLength(256)) })).pipe(
    Schema.maxItems(1000)
  )),
  client_message_id: Schema.optional(Text.Text.pipe(Schema.minLength(1), Schema.maxLength(128))),
  /** What this send does while a reply of the conversation streams; the deployment's setting when absent. */
  concurrent_send: Schema.optional(Deployment.ConcurrentSend)
})

export const SendResponse = Schema.Struct({ message_id: Schema.String, timestamp: Schema.DateTimeUtc })

export const HistoryResponse = Schema.Struct({ messages: Schema.Array(Conversation.Message) })

export const CancelResponse = Schema.Struct({
  status: Schema.Literal("cancelled", "idle"),
  message_id: Schema.NullOr(Schema.String)
})

export class ChatApi extends HttpApiGroup.make("chat")
  .add(
    HttpApiEndpoint.get("list")`/deployments/${deploymentId}/chat/conversations`
      .addSuccess(ListResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The caller's conversations with the deployment, most recent first")
  )
  .add(
    HttpApiEndpoint.put("setTitle")`/deployments/${deploymentId}/chat/conversations/${conversationId}/title`
      .annotate(RequiredScope, "chat")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(TitleRequest)
      .addSuccess(TitleResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Set a conversation's title (idempotent; 1-80 characters)")
  )
  .add(
    HttpApiEndpoint.post("send")`/deployments/${deploymentId}/messaging/conversations/${conversationId}/messages`
      .annotate(RequiredScope, "chat")
      // A message of up to 100,000 characters (up to 6 bytes each once escaped) and its attachment keys.
      .annotate(BodyLimit, 1024 * KiB)
      .setPayload(SendRequest)
      .addSuccess(SendResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .addError(PayloadTooLarge)
      .annotate(OpenApi.Summary, "Send a user message; the reply streams on the conversation's reply stream")
      .annotate(
        OpenApi.Description,
        "While a reply of the conversation is still streaming, `concurrent_send` (else the deployment's setting, else " +
          "`interrupt`) decides: `interrupt` stops that reply (stored as `cancelled`) and starts this one; `queue` starts " +
          "this one when it ends; `reject` answers 409 `reply_in_progress` and stores nothing. 409 " +
          "`message_limit_reached` when the conversation is terminal. A `client_message_id` sent again answers with " +
          "the first send's message."
      )
  )
  .add(
    HttpApiEndpoint.get("history")`/deployments/${deploymentId}/messaging/conversations/${conversationId}/messages`
      .addSuccess(HistoryResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Every message of the conversation, oldest first")
  )
  .add(
    HttpApiEndpoint.get("stream")`/deployments/${deploymentId}/messaging/conversations/${conversationId}/stream`
      .setUrlParams(EventsParams)
      .setHeaders(EventsHeaders)
      .addSuccess(EventStream)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "Server-sent stream of the replies: message.delta, message.completed, message.failed, heartbeat"
      )
  )
  .add(
    HttpApiEndpoint.post("cancel")`/deployments/${deploymentId}/messaging/conversations/${conversationId}/cancel`
      .annotate(RequiredScope, "chat")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(CancelResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Stop the reply in flight; it is stored as cancelled with what arrived")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Chat")
  .annotate(OpenApi.Description, "Conversations of the caller with a deployed agent: messages, the streamed replies, titles, cancellation")
{}
