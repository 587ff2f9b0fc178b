/**
 * Conversations with a deployed agent and their messages.
 */
import { Schema } from "effect"
import { DeploymentId } from "./Deployment.js"
import { UserId } from "./Ids.js"
import { Text } from "./Text.js"

/** A conversation id: a UUID v4 chosen by the client. */
export const ConversationId = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i, {
    message: () => "must be a UUID v4 chosen by the client"
  }),
  Schema.brand("ConversationId")
)
export type ConversationId = typeof ConversationId.Type

/** Identifier of a message. */
export const MessageId = Schema.String.pipe(Schema.brand("MessageId"))
export type MessageId = typeof MessageId.Type

/** Longest title, in user-perceived characters. */
export const maxTitleLength = 80

let segmenter: Intl.Segmenter | undefined

/** The grapheme clusters of a text, by one shared segmenter (making one costs more than segmenting a title). */
const graphemes = (text: string) => (segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })).segment(text)

/**
 * Counts user-perceived characters (grapheme clusters), not UTF-16 code
 * units, stopping once past `limit`: walking a long text through the
 * segmenter takes time quadratic in its length (a 300 KB title took 90 s).
 */
export const graphemeLength = (text: string, limit = Number.POSITIVE_INFINITY): number => {
  let count = 0
  for (const _ of graphemes(text)) {
    if (++count > limit) break
  }
  return count
}

/** The first `max` user-perceived characters of a text. */
export const graphemeSlice = (text: string, max: number): string => {
  // Every character is at least one UTF-16 unit: a text this short is whole.
  if (text.length <= max) return text
  let out = ""
  let count = 0
  for (const { segment } of graphemes(text)) {
    if (count++ === max) break
    out += segment
  }
  return out
}

/** A title: not blank, at most 80 user-perceived characters. */
export const Title = Text.pipe(
  Schema.filter((s) => s.trim().length > 0 && graphemeLength(s, maxTitleLength) <= maxTitleLength, {
    message: () => `must be 1 to ${maxTitleLength} characters and not blank`
  })
)

/** A reference to a file attached to a message. */
export class Attachment extends Schema.Class<Attachment>("Attachment")({
  key: Schema.String,
  filename: Schema.String
}) {}

/** Where a message stands. */
export const MessageStatus = Schema.Literal("complete", "streaming", "failed", "cancelled")
export type MessageStatus = typeof MessageStatus.Type

/** A stored message (extensions.md "Message history"). */
export class Message extends Schema.Class<Message>("Message")({
  message_id: MessageId,
  role: Schema.Literal("user", "assistant"),
  content: Schema.String,
  attachments: Schema.Array(Attachment),
  timestamp: Schema.DateTimeUtc,
  status: MessageStatus,
  /**
   * The trace of the turn an assistant message answers (docs/observability.md
   * "Traces of chat turns"); null for user messages, and for replies made
   * while traces are off.
   */
  trace_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
}) {}

/** A conversation as stored. */
export class ConversationRecord extends Schema.Class<ConversationRecord>("ConversationRecord")({
  id: ConversationId,
  deployment_id: DeploymentId,
  owner_id: UserId,
  title: Schema.String,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc,
  user_messages: Schema.Int,
  terminal: Schema.Boolean,
  assistant_streaming: Schema.Boolean
}) {}

/** A conversation as the API lists it (interface.md "Conversation summary"). */
export class ConversationSummary extends Schema.Class<ConversationSummary>("ConversationSummary")({
  conversation_id: ConversationId,
  title: Schema.String,
  updated_at: Schema.DateTimeUtc,
  assistant_streaming: Schema.Boolean
}) {}
