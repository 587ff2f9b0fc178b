import { Context, type DateTime, Effect, type Option } from "effect"
import type { ConversationId, ConversationRecord, ConversationSummary, Message, MessageId, MessageStatus } from "../model/Conversation.js"
import type { DeploymentId } from "../model/Deployment.js"
import type { StorageError } from "../model/Errors.js"
import type { UserId } from "../model/Ids.js"
import type { ReplyLease, TurnInput, TurnStart } from "../model/Turn.js"

/** Conversations and their messages. */
export class ConversationStore extends Context.Tag("@hosting/core/ConversationStore")<ConversationStore, {
  readonly find: (id: ConversationId) => Effect.Effect<Option.Option<ConversationRecord>, StorageError>
  /**
   * A user's conversations on a deployment as the API lists them, most
   * recently updated first: a store reads only what a summary shows.
   */
  readonly listFor: (deploymentId: DeploymentId, ownerId: UserId) => Effect.Effect<ReadonlyArray<ConversationSummary>, StorageError>
  readonly setTitle: (id: ConversationId, title: string, now: DateTime.Utc) => Effect.Effect<void, StorageError>
  /**
   * Starts a turn (interface.md send-message rules): creates the
   * conversation on its first message, then, unless the turn is refused,
   * stores the user message and the streaming reply and counts the user
   * message (the one that reaches the limit makes the conversation
   * terminal). Run it in a transaction: it holds the conversation until the
   * transaction ends (where the database has row locks), so that concurrent
   * sends to one conversation, even from several processes, take turns. A
   * refused turn writes nothing. The rules are `Turn.decide`'s: a store
   * reads the conversation, asks it, and writes what it answers.
   */
  readonly startTurn: (turn: TurnInput) => Effect.Effect<TurnStart, StorageError>
  /**
   * Appends a message; a user message counts toward the limit. Moves
   * `updated_at`. A streaming reply carries the lease of the process that
   * receives it.
   */
  readonly append: (input: {
    readonly conversation_id: ConversationId
    readonly message: Message
    readonly client_message_id: Option.Option<string>
    readonly lease?: ReplyLease | undefined
  }) => Effect.Effect<void, StorageError>
  /** Every message of the conversation, oldest first. */
  readonly messages: (conversationId: ConversationId) => Effect.Effect<ReadonlyArray<Message>, StorageError>
  /** The newest assistant message of the conversation. */
  readonly latestReply: (conversationId: ConversationId) => Effect.Effect<Option.Option<Message>, StorageError>
  /**
   * Replaces a message's content and status (a reply's progress). One write,
   * whole or not at all without a transaction around it: the reply runner
   * runs a reply's last write alone without one (GroupCommit `oneStatement`).
   */
  readonly updateMessage: (
    id: MessageId,
    content: string,
    status: MessageStatus,
    now: DateTime.Utc
  ) => Effect.Effect<void, StorageError>
  /**
   * Stores what arrived of several replies in one write (the periodic
   * flush); a reply that is no longer `streaming` is left as it is.
   */
  readonly flushReplies: (
    progress: ReadonlyArray<{ readonly id: MessageId; readonly content: string }>,
    now: DateTime.Utc
  ) => Effect.Effect<void, StorageError>
  /** Extends the leases of every reply that `owner` is still receiving. */
  readonly renewLeases: (owner: string, expiresAt: DateTime.Utc) => Effect.Effect<void, StorageError>
  /**
   * The lease owners of streaming replies that the storage knows are gone
   * (see `LeaseOwner`); none where it cannot tell.
   */
  readonly goneOwners: Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * Closes as `failed` (keeping their content) the replies left `streaming`:
   * with `leaseEndedBefore`, only those whose lease ended before that time
   * (their process stopped renewing) and those of `ownersGone`; without,
   * all of them (one process owns the storage and has just started).
   * Returns what it closed.
   */
  readonly closeStreaming: (
    leaseEndedBefore: Option.Option<DateTime.Utc>,
    ownersGone?: ReadonlyArray<string>
  ) => Effect.Effect<
    ReadonlyArray<{ readonly conversation_id: ConversationId; readonly message: Message }>,
    StorageError
  >
}>() {}

export type { ReplyLease, TurnInput, TurnStart } from "../model/Turn.js"
