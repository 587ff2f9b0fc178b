/**
 * A turn on its way through the reply runner: what is asked (a turn to
 * store), what came of it, the state of its reply while it runs, and the
 * two messages a stored turn starts with.
 */
import { type Context, DateTime, Effect, type Fiber, type Option } from "effect"
import { type Attachment, type ConversationId, Message, MessageId } from "../../model/Conversation.js"
import type { ConcurrentSend, DeploymentRecord } from "../../model/Deployment.js"
import type { UserId } from "../../model/Ids.js"
import type { TurnStart } from "../../model/Turn.js"
import type { ConversationStore, IdGenerator } from "../../ports/Ports.js"
import type { TurnTrace } from "./TurnTraces.js"
import * as Trusted from "../../model/Trusted.js"
import { Outcome } from "../../internal/outcome.js"
import * as Steps from "../../runtime/Steps.js"


/** A turn to store, checked by the conversation use cases. */
export interface NewTurn {
  readonly owner: UserId
  readonly deployment: DeploymentRecord
  readonly conversation: ConversationId
  /** The title of a conversation this turn creates. */
  readonly title: string
  readonly content: string
  readonly attachments: ReadonlyArray<Attachment>
  /** Makes a retried send idempotent: the same answer, no second message. */
  readonly client_message_id: Option.Option<string>
  /** What the turn does to a reply of the conversation still streaming. */
  readonly concurrent_send: ConcurrentSend
}

/** What came of a turn: its user message (stored now, or earlier with the same client_message_id), or a refusal. */
export type TurnOutcome =
  | { readonly _tag: "Stored"; readonly message: Message }
  | Extract<TurnStart, { readonly _tag: "NotOwner" | "LimitReached" | "ReplyInProgress" }>

/** A reply in flight (or queued) in this process. */
export interface RunningReply {
  readonly conversation: ConversationId
  /** The conversation's owner: the only one who sees the turn's trace. */
  readonly owner: UserId
  readonly message_id: MessageId
  /** What arrived so far (ahead of storage by at most one flush interval). */
  content: string
  /** How much of `content` the last write stored. */
  stored: number
  /** Set at the reply's last write: no flush touches it afterwards. */
  ended: boolean
  /** A flush of this reply in flight: the last write waits for it, so that it lands last. */
  flushing: Outcome<void> | undefined
  /** The user messages of the conversation before this turn: of two turns' replies, the later one's supersedes. */
  readonly turn: number
  /** Set to stop the reply (a cancel, a later turn); a reply whose fiber is not there yet stops as soon as it is. */
  cancelled: boolean
  fiber?: Fiber.RuntimeFiber<void>
  /** Done once the reply's fiber ended, its last write stored (or given up). */
  readonly done: Outcome<void>
  /** The trace the turn is recorded under (none while traces are off). */
  readonly trace: TurnTrace | undefined
}

/**
 * The user's message of a turn and its reply (empty, streaming), stamped
 * now, the reply naming the turn's trace. Built of checked values (the
 * request's, the file store's, the clock's): not checked again.
 */
export const turnMessages = Effect.fnUntraced(
  function*(ids: Context.Tag.Service<IdGenerator>, input: NewTurn, traceId: string | null) {
    const now = yield* Steps.now
    const message = Trusted.make(Message, {
      message_id: MessageId.make(`msg-${yield* ids.next}`),
      role: "user",
      content: input.content,
      attachments: input.attachments,
      timestamp: now,
      status: "complete"
    })
    const reply = Trusted.make(Message, {
      message_id: MessageId.make(`msg-${yield* ids.next}`),
      role: "assistant",
      content: "",
      attachments: [],
      timestamp: now,
      status: "streaming",
      trace_id: traceId
    })
    return { message, reply }
  }
)

/**
 * A stored reply as it stands while it streams here, with the `content`
 * that arrived so far. Made from checked values (the stored message, the
 * chunks as the runner keeps them): the constructor's checks took about
 * 7 µs (0.3 here) for each reply stream opened, and each history read,
 * while the reply runs.
 */
export const streamingWith = (message: Message, content: string): Message =>
  Trusted.make(Message, {
    message_id: message.message_id,
    role: message.role,
    content,
    attachments: message.attachments,
    timestamp: message.timestamp,
    status: "streaming",
    trace_id: message.trace_id
  })

/** The state of a stored turn's reply as it starts in this process: nothing arrived, nothing stored, not stopped. */
export const runningReply = (input: NewTurn, messageId: MessageId, turn: number, trace: TurnTrace | undefined) =>
  Effect.sync((): RunningReply => ({
    conversation: input.conversation,
    owner: input.owner,
    message_id: messageId,
    content: "",
    stored: 0,
    ended: false,
    flushing: undefined,
    turn,
    cancelled: false,
    done: new Outcome<void>(),
    trace
  }))

/** What storing a turn needs of the reply runner. */
export interface TurnStorage {
  readonly ids: Context.Tag.Service<IdGenerator>
  readonly conversations: Context.Tag.Service<ConversationStore>
  /** This process as the owner of the reply's lease, and when a lease taken now ends. */
  readonly leases: { readonly owner: string; readonly end: Effect.Effect<DateTime.Utc> }
  readonly messageLimit: number
}

/**
 * A turn's writes, as a member of a group commit: its messages, the
 * conversation's turn, and the history when the reply needs it.
 */
export const storeTurnWith = (deps: TurnStorage) =>
  Effect.fnUntraced(function*(input: NewTurn, trace: TurnTrace | undefined) {
    const { message, reply } = yield* turnMessages(deps.ids, input, trace?.trace_id ?? null)
    // Creates the conversation on the first send and holds it until commit: concurrent sends take turns.
    const turn = yield* deps.conversations.startTurn({
      conversation_id: input.conversation,
      deployment_id: input.deployment.id,
      owner_id: input.owner,
      title: input.title,
      message,
      client_message_id: input.client_message_id,
      reply,
      lease: { owner: deps.leases.owner, expires_at: yield* deps.leases.end },
      message_limit: deps.messageLimit,
      reject_if_streaming: input.concurrent_send === "reject"
    })
    // Refusals are answers, not failures: a failure would roll back the other turns of the group.
    if (turn._tag !== "Started") return turn
    // A conversation without a user turn yet has no history: no need to read it.
    const history = turn.user_messages === 0 ? [] : yield* deps.conversations.messages(input.conversation)
    return { _tag: "Started" as const, message, reply, history, turn: turn.user_messages }
  })
