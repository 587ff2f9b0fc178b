/**
 * The rules of starting a turn (a user message and the reply to it), as one
 * pure decision that every ConversationStore asks: the conversation is the
 * caller's on this deployment, a message sent again is not stored twice, a
 * terminal conversation takes nothing more, the limit counts user messages,
 * and a turn that rejects concurrent sends is not taken while a reply
 * streams. The store reads the conversation (holding it until its
 * transaction ends), asks `decide`, and writes what the answer says.
 */
import { type DateTime, Option } from "effect"
import type { ConversationId, Message } from "./Conversation.js"
import type { DeploymentId } from "./Deployment.js"
import type { UserId } from "./Ids.js"

/** A turn to start: the user's message and the reply that answers it, both at the message's time. */
export interface TurnInput {
  readonly conversation_id: ConversationId
  /** Whose conversation it is: a conversation of another user or deployment refuses the turn. */
  readonly deployment_id: DeploymentId
  readonly owner_id: UserId
  /** The title of a conversation this turn creates. */
  readonly title: string
  readonly message: Message
  /** Makes a retried send idempotent: the turn of an earlier message with this id is not started again. */
  readonly client_message_id: Option.Option<string>
  /** The empty streaming reply, with the lease of the process that receives it. */
  readonly reply: Message
  readonly lease: ReplyLease
  /** User messages a conversation takes before it is terminal. */
  readonly message_limit: number
  /** Refuses the turn (`ReplyInProgress`) while a reply of the conversation is streaming (the `reject` strategy). */
  readonly reject_if_streaming?: boolean | undefined
}

/** What came of starting a turn. */
export type TurnStart =
  /** Both messages are stored; `user_messages` is how many the conversation had before this one. */
  | { readonly _tag: "Started"; readonly user_messages: number }
  /** The conversation already holds the user message with this client_message_id. */
  | { readonly _tag: "Repeated"; readonly message: Message }
  /** The conversation belongs to another user or another deployment. */
  | { readonly _tag: "NotOwner" }
  /** The conversation is terminal, or holds as many user messages as the limit. */
  | { readonly _tag: "LimitReached" }
  /** A reply of the conversation is streaming and the turn rejects concurrent sends. */
  | { readonly _tag: "ReplyInProgress" }

/** Who is receiving a streaming reply, and until when that claim holds unless renewed. */
export interface ReplyLease {
  readonly owner: string
  readonly expires_at: DateTime.Utc
}

/** What the store read of an existing conversation, for a turn to it. */
export interface Stored {
  readonly owner_id: string
  readonly deployment_id: string
  /** User messages the conversation holds. */
  readonly user_messages: number
  /** Whether the conversation has reached its limit for good. */
  readonly terminal: boolean
  /** The message the conversation holds with the turn's client_message_id; none when the turn has none. */
  readonly earlier: Option.Option<Message>
  /**
   * Whether a reply of the conversation is streaming. A store need read it
   * only for a turn with `reject_if_streaming` (it may say false otherwise).
   */
  readonly streaming: boolean
}

/**
 * The turn is taken: the store writes both messages and gives the
 * conversation these counts (creating it when it did not exist).
 */
export interface Accept {
  readonly _tag: "Accept"
  /** User messages the conversation held before the turn. */
  readonly before: number
  /** User messages it holds with the turn. */
  readonly user_messages: number
  /** Whether the turn makes (or leaves) the conversation terminal. */
  readonly terminal: boolean
}

/** The turn is not taken, and the store writes nothing: the store's answer as it is. */
export type Refused = Exclude<TurnStart, { readonly _tag: "Started" }>

/** What to do with a turn. */
export type Decision = Accept | Refused

const notOwner: Refused = { _tag: "NotOwner" }
const limitReached: Refused = { _tag: "LimitReached" }
const replyInProgress: Refused = { _tag: "ReplyInProgress" }

const accept = (before: number, limit: number): Accept => ({
  _tag: "Accept",
  before,
  user_messages: before + 1,
  // The user message that reaches the limit makes the conversation terminal.
  terminal: before + 1 >= limit
})

/**
 * Decides a turn from what the store read (none: the conversation does not
 * exist yet). In order: a conversation of another user or deployment
 * refuses it (`NotOwner`); one that already holds the turn's
 * client_message_id answers with that message (`Repeated`); a terminal one,
 * or one at the limit, refuses it (`LimitReached`); one with a reply
 * streaming refuses a turn that rejects concurrent sends
 * (`ReplyInProgress`); otherwise it is taken.
 * A first message creates the conversation, unless the limit is below one.
 */
export const decide = (turn: TurnInput, stored: Option.Option<Stored>): Decision => {
  if (Option.isNone(stored)) return turn.message_limit < 1 ? limitReached : accept(0, turn.message_limit)
  const conversation = stored.value
  if (conversation.owner_id !== turn.owner_id || conversation.deployment_id !== turn.deployment_id) return notOwner
  if (Option.isSome(conversation.earlier)) return { _tag: "Repeated", message: conversation.earlier.value }
  if (conversation.terminal || conversation.user_messages >= turn.message_limit) return limitReached
  if (turn.reject_if_streaming === true && conversation.streaming) return replyInProgress
  return accept(conversation.user_messages, turn.message_limit)
}

/** The store's answer for a turn it has written. */
export const started = (accepted: Accept): TurnStart => ({ _tag: "Started", user_messages: accepted.before })
