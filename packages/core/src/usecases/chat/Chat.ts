/**
 * Chat with a deployed agent: the conversation use cases (listing, titles,
 * sending a message, cancelling the reply, history and following the reply
 * stream), checked here and carried out by the reply runner
 * (`ReplyRunner.ts`: storing turns, running and storing replies) and the
 * reply stream (`ReplyStream.ts`: snapshot, live events, resumption).
 */
import { DateTime, Effect, Option, type Stream } from "effect"
import { Attachment, type ConversationId, graphemeLength, graphemeSlice, maxTitleLength } from "../../model/Conversation.js"
import { type ConcurrentSend, defaultConcurrentSend, type DeploymentId, type DeploymentRecord } from "../../model/Deployment.js"
import {
  AttachmentInvalid,
  ConversationNotFound,
  DeploymentNotFound,
  InvalidRequest,
  MessageLimitReached,
  type PermissionDenied,
  ReplyInProgress,
  type StorageError,
  TooManyAttachments
} from "../../model/Errors.js"
import type { UserId } from "../../model/Ids.js"
import * as Policy from "../../model/Policy.js"
import type { Principal } from "../../model/Principal.js"
import { orFail } from "../../internal/lookup.js"
import { ConversationStore, DeploymentStore, FileStore } from "../../ports/Ports.js"
import { type Receiver, toStream } from "../../runtime/Receiver.js"
import * as Recent from "../../runtime/Recent.js"
import * as Tracing from "../../runtime/Tracing.js"
import { ChatConfig } from "./ChatConfig.js"
import * as ReplyRunner from "./ReplyRunner.js"
import * as ReplyStream from "./ReplyStream.js"

export { ChatConfig, failure } from "./ChatConfig.js"
export type { ReplyItem } from "./ReplyStream.js"

/** Most conversations whose owner a process keeps knowing (about a hundred bytes each). */
const maxKnownOwners = 100_000

/** What a message carries (interface.md send-message body). */
export interface SendInput {
  readonly content?: string | undefined
  readonly attachments?: ReadonlyArray<{ readonly key: string }> | undefined
  /** Makes a retried send idempotent: the same answer, no second message. */
  readonly client_message_id?: string | undefined
  /** What to do while a reply of the conversation streams; the deployment's setting when absent. */
  readonly concurrent_send?: ConcurrentSend | undefined
}

/** The first title of a conversation: the start of its first message, or its first file's name. */
const firstTitle = (content: string, attachments: ReadonlyArray<Attachment>) => {
  const text = content.trim().replace(/\s+/g, " ")
  if (text !== "") return graphemeSlice(text, maxTitleLength)
  return graphemeSlice(attachments[0]?.filename ?? "New conversation", maxTitleLength)
}

export class Chat extends Effect.Service<Chat>()("@hosting/core/Chat", {
  scoped: Effect.gen(function*() {
    const conversations = yield* ConversationStore
    const deployments = yield* DeploymentStore
    const files = yield* FileStore
    const config = yield* ChatConfig
    const runner = yield* ReplyRunner.make
    const replyStream = yield* ReplyStream.make(runner.current)

    // Kept in the process by DeploymentCache when the use cases are built with it (UseCases.layer is).
    const deploymentById = deployments.findById

    /** The deployment, for a member of the deploying account (a chain, not a generator: every chat call reads it). */
    const deploymentOf = (
      principal: Principal,
      id: DeploymentId
    ): Effect.Effect<DeploymentRecord, DeploymentNotFound | PermissionDenied | StorageError> =>
      Effect.flatMap(deploymentById(id), (found): Effect.Effect<DeploymentRecord, DeploymentNotFound | PermissionDenied> => {
        if (Option.isNone(found)) return Effect.fail(new DeploymentNotFound({ deployment: id }))
        const refused = Policy.chatRefusal(principal, found.value)
        return Option.isSome(refused) ? Effect.fail(refused.value) : Effect.succeed(found.value)
      })

    /**
     * The owner and deployment of conversations seen lately (at most
     * `maxKnownOwners`, the oldest forgotten first): neither ever changes,
     * and a conversation is never removed, so what is known stays true on
     * every process.
     */
    const knownOwners = Recent.make<ConversationId, { readonly owner: UserId; readonly deployment: DeploymentId }>(maxKnownOwners)
    const knowOwner = (id: ConversationId, owner: UserId, deployment: DeploymentId) => {
      knownOwners.set(id, { owner, deployment })
    }

    /** A conversation of the caller on the deployment; anything else is not found. */
    const ownConversation = (principal: Principal, deploymentId: DeploymentId, id: ConversationId) =>
      conversations.find(id).pipe(
        Effect.tap((found) => Option.isSome(found) && knowOwner(id, found.value.owner_id, found.value.deployment_id)),
        Effect.map(Option.filter((c) => Policy.owns(principal, c.owner_id) && c.deployment_id === deploymentId)),
        orFail(() => new ConversationNotFound({ conversation: id }))
      )

    /** `ownConversation` for a caller that needs no more than the answer: known owners are not read again. */
    const requireOwnConversation = (principal: Principal, deploymentId: DeploymentId, id: ConversationId) =>
      Effect.suspend(() => {
        const known = knownOwners.get(id)
        if (known === undefined) return Effect.asVoid(ownConversation(principal, deploymentId, id))
        return Policy.owns(principal, known.owner) && known.deployment === deploymentId
          ? Effect.void
          : Effect.fail(new ConversationNotFound({ conversation: id }))
      })

    /** The caller's conversations on a deployment, most recent first. */
    // The reads of every page load, in flatMap steps: a generator costs several steps of its own for each `yield*`.
    const list = (principal: Principal, deploymentId: DeploymentId) =>
      Tracing.withSpan("Chat.list")(Effect.flatMap(deploymentOf(principal, deploymentId), () =>
        conversations.listFor(deploymentId, principal.user.id)))

    /** Sets the title; idempotent; never creates a conversation. */
    const setTitle = Tracing.fn("Chat.setTitle")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      id: ConversationId,
      title: string
    ) {
      yield* deploymentOf(principal, deploymentId)
      if (title.trim() === "" || graphemeLength(title, maxTitleLength) > maxTitleLength) {
        return yield* new InvalidRequest({ details: `title: must be 1 to ${maxTitleLength} characters and not blank` })
      }
      const conversation = yield* ownConversation(principal, deploymentId, id)
      if (conversation.title !== title) yield* conversations.setTitle(id, title, yield* DateTime.now)
      return { conversation_id: id, title }
    })

    /**
     * Sends a user message (interface.md send-message rules 1-7): stores the
     * user turn and an empty streaming reply in one transaction, then starts
     * the reply in the background and answers at once. While a reply of the
     * conversation streams, the send's strategy (its own, else its
     * deployment's, else `interrupt`) decides: `interrupt` stops that reply,
     * `queue` starts this one when it ends, `reject` refuses the send
     * (`ReplyInProgress`) and stores nothing.
     */
    const send = Tracing.fn("Chat.send")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      conversationId: ConversationId,
      input: SendInput
    ) {
      const deployment = yield* deploymentOf(principal, deploymentId)
      const content = input.content ?? ""
      const keys = [...new Set((input.attachments ?? []).map((a) => a.key))]
      if (content.trim() === "" && keys.length === 0) {
        return yield* new InvalidRequest({ details: "A message needs content or at least one attachment." })
      }
      if (keys.length > config.maxAttachments) {
        return yield* new TooManyAttachments({ count: keys.length, limit: config.maxAttachments })
      }
      // The authoritative metadata: a key the caller sends is only a reference. Most messages have no file, and an
      // empty `forEach` still costs the run loop nine steps.
      const attached: ReadonlyArray<Attachment> = keys.length === 0 ? [] : yield* Effect.forEach(keys, (key) =>
        files.find(deploymentId, key).pipe(
          Effect.map(Option.filter((f) => Policy.owns(principal, f.owner_id) && f.status === "ready")),
          orFail(() => new AttachmentInvalid({ key })),
          Effect.map((f) => new Attachment({ key: f.key, filename: f.filename }))
        ))
      // From here the turn is not interrupted (a client that goes away): once stored, its reply starts.
      const outcome = yield* Effect.uninterruptible(runner.take({
        owner: principal.user.id,
        deployment,
        conversation: conversationId,
        title: firstTitle(content, attached),
        content,
        attachments: attached,
        client_message_id: Option.fromNullable(input.client_message_id),
        concurrent_send: input.concurrent_send ?? deployment.concurrent_send ?? defaultConcurrentSend
      }))
      switch (outcome._tag) {
        case "NotOwner":
          return yield* new ConversationNotFound({ conversation: conversationId })
        case "LimitReached":
          return yield* new MessageLimitReached({ limit: config.messageLimit })
        case "ReplyInProgress":
          return yield* new ReplyInProgress({ conversation: conversationId })
      }
      // Committed: the conversation is the caller's on this deployment, for good.
      knowOwner(conversationId, principal.user.id, deploymentId)
      return { message_id: outcome.message.message_id, timestamp: outcome.message.timestamp }
    })

    /**
     * Stops the reply in flight. When another process is receiving it (shared
     * storage), the request goes to that process over the bus and the reply
     * ends as cancelled there.
     */
    const cancel = Tracing.fn("Chat.cancel")(function*(principal: Principal, deploymentId: DeploymentId, id: ConversationId) {
      yield* deploymentOf(principal, deploymentId)
      yield* requireOwnConversation(principal, deploymentId, id)
      return yield* runner.cancel(id)
    })

    /** Every message of the caller's conversation, oldest first. */
    const history = (principal: Principal, deploymentId: DeploymentId, id: ConversationId) =>
      Tracing.withSpan("Chat.history")(Effect.flatMap(deploymentOf(principal, deploymentId), () =>
        Effect.flatMap(requireOwnConversation(principal, deploymentId, id), () =>
          Effect.map(conversations.messages(id), (messages) => messages.map((m) => runner.current(m, id))))))

    /**
     * Follows the replies of the caller's conversation until the scope
     * closes. Opened while a reply streams, the receiver gets what arrived
     * so far as one delta, then every chunk; opened after, the latest reply
     * and its end. `lastEventId` resumes after the event with that id. A
     * heartbeat comes every interval; the receiver is ended when the service
     * stops. A reply is bounded, so a receiver's request for a pause is not
     * needed: it is given everything.
     */
    const follow = Tracing.fn("Chat.follow")(function*(
      principal: Principal,
      deploymentId: DeploymentId,
      id: ConversationId,
      lastEventId: Option.Option<string>,
      receiver: Receiver<ReplyStream.ReplyItem>
    ) {
      yield* deploymentOf(principal, deploymentId)
      yield* requireOwnConversation(principal, deploymentId, id)
      return yield* replyStream.open(id, lastEventId, receiver)
    })

    return { list, setTitle, send, cancel, history, follow } as const
  })
}) {}

/** The reply stream of a conversation as a `Stream` (a view of `follow`): it fails as `follow` does. */
export const stream = (
  chat: Chat,
  principal: Principal,
  deploymentId: DeploymentId,
  id: ConversationId,
  lastEventId: Option.Option<string>
): Stream.Stream<ReplyStream.ReplyItem, Effect.Effect.Error<ReturnType<Chat["follow"]>>> =>
  toStream((receiver: Receiver<ReplyStream.ReplyItem>) => chat.follow(principal, deploymentId, id, lastEventId, receiver))
