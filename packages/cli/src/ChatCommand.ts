/**
 * `hosting chat list|send|title|history|cancel`: conversations with a
 * deployed agent. `send` prints the reply as it streams.
 */
import { Args, Command, Options } from "@effect/cli"
import { ReplyStream } from "@hosting/client"
import { Conversation, type Deployment } from "@hosting/core"
import { Effect, Option, Schema, Stream } from "effect"
import * as Arguments from "./Arguments.js"
import * as DeploymentRefs from "./DeploymentRefs.js"
import { CliFailure, notFound, server, usageError } from "./ExitCode.js"
import * as Output from "./Output.js"
import * as Session from "./Session.js"

const readStdin = Effect.promise(async () => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
})

/**
 * The conversation an argument names: an id as it is, else the one
 * conversation of the deployment whose id starts with it.
 */
const resolveConversation = (session: Session.Session, deployment: Deployment.DeploymentId, raw: string) =>
  Effect.gen(function*() {
    if (Schema.is(Conversation.ConversationId)(raw)) return raw
    const { conversations } = yield* session.client.chat.list({ path: { deploymentId: deployment } })
    const matches = conversations.filter((c) => c.conversation_id.startsWith(raw.toLowerCase()))
    if (matches.length === 1) return matches[0]!.conversation_id
    if (matches.length === 0) {
      return yield* new CliFailure({
        exitCode: notFound,
        error: "conversation_not_found",
        details: `no conversation of ${deployment} starts with ${raw}`
      })
    }
    return yield* usageError(
      `${raw} starts ${matches.length} conversations (${matches.slice(0, 3).map((c) => c.conversation_id).join(", ")}${
        matches.length > 3 ? ", …" : ""
      }); give more of the id`,
      "ambiguous_id"
    )
  })

const list = Command.make("list", { deployment: Arguments.deployment }, ({ deployment: ref }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const found = yield* session.client.chat.list({ path: { deploymentId: deployment } })
    if (session.json) return yield* Output.json(found)
    yield* Output.line(Output.table([
      { header: "CONVERSATION", value: (c) => c.conversation_id },
      { header: "UPDATED", value: (c) => Output.date(c.updated_at) },
      { header: "STREAMING", value: (c) => (c.assistant_streaming ? "yes" : "no") },
      { header: "TITLE", value: (c) => Output.cut(c.title) }
    ], found.conversations))
  })).pipe(Command.withDescription("Your conversations with a deployment, most recent first"))

/** How the awaited reply ended. */
interface Outcome {
  readonly message_id: string | undefined
  readonly status: "complete" | "failed" | "cancelled" | "streaming"
  readonly content: string
  readonly error?: string
}

const send = Command.make("send", {
  deployment: Arguments.deployment,
  message: Args.text({ name: "message" }).pipe(Args.withDescription("The message text; - reads it from stdin"), Args.optional),
  conversation: Options.text("conversation").pipe(
    Options.withAlias("c"),
    Options.withDescription("Continue this conversation (default: start a new one)"),
    Arguments.checked("--conversation", Conversation.ConversationId),
    Options.optional
  ),
  attach: Options.text("attach").pipe(Options.withDescription("The key of a ready file to attach; repeatable"), Options.repeated),
  clientMessageId: Options.text("client-message-id").pipe(
    Options.withDescription("An id of yours that makes a retried send safe"),
    Options.optional
  ),
  concurrentSend: Arguments.concurrentSend.pipe(
    Options.withDescription(
      "While a reply of the conversation still streams: reject this send (409), queue it, or interrupt the reply (default: the deployment's setting)"
    ),
    Options.optional
  )
}, ({ attach, clientMessageId, concurrentSend, conversation, deployment: ref, message }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const { id: deployment, record: target } = yield* DeploymentRefs.resolve(session, ref)
    if (target !== undefined && target.undeployed_at !== null) {
      // The API decides whether an ended deployment still takes messages; the person should know it has ended.
      yield* Output.note(
        `warning: ${deployment} is ${target.status} (ended ${Output.date(target.undeployed_at)}); sending to it anyway. ` +
          `\`hosting chat send ${target.agent} …\` sends to the agent's live deployment`
      )
    }
    const content = Option.isSome(message) ? (message.value === "-" ? yield* readStdin : message.value) : ""
    if (content.trim() === "" && attach.length === 0) return yield* usageError("a message needs text or --attach")
    const conversationId = Option.getOrElse(conversation, () => Conversation.ConversationId.make(globalThis.crypto.randomUUID()))
    const path = { deploymentId: deployment, conversationId }
    const sent = yield* session.client.chat.send({
      path,
      payload: {
        ...(content === "" ? {} : { content }),
        ...(attach.length === 0 ? {} : { attachments: attach.map((key) => ({ key })) }),
        ...Option.match(clientMessageId, { onNone: () => ({}), onSome: (id) => ({ client_message_id: id }) }),
        ...Option.match(concurrentSend, { onNone: () => ({}), onSome: (strategy) => ({ concurrent_send: strategy }) })
      }
    })
    if (!session.json) yield* Output.note(`conversation ${conversationId}`)
    // The reply is the assistant message stored right after the user's.
    const { messages } = yield* session.client.chat.history({ path })
    const position = messages.findIndex((m) => m.message_id === sent.message_id)
    const stored = messages.slice(position + 1).find((m) => m.role === "assistant")
    let outcome: Outcome
    if (stored !== undefined && stored.status !== "streaming") {
      // Already over (a repeated send, or a quick agent): the history has it all.
      outcome = { message_id: stored.message_id, status: stored.status, content: stored.content }
      if (!session.json) yield* Output.write(`${stored.content}\n`)
    } else {
      let ended: Outcome = { message_id: stored?.message_id, status: "streaming", content: "" }
      // Ctrl-C stops following the reply, not the reply: say how to stop it too (the exit code is then 130).
      const onCtrlC = Effect.suspend(() =>
        Output.note(
          `${ended.content === "" || session.json ? "" : "\n"}stopped following the reply, which goes on on the server; ` +
            `cancel it with: hosting chat cancel ${deployment} ${conversationId}`
        )
      )
      yield* ReplyStream.reply({ ...session.options, ...path, messageId: stored?.message_id }).pipe(
        Stream.runForEach((part) => {
          switch (part._tag) {
            case "Delta":
              ended = { ...ended, message_id: part.message_id, content: ended.content + part.delta }
              return session.json ? Effect.void : Output.write(part.delta)
            case "Completed":
              ended = { message_id: part.message_id, status: "complete", content: part.content }
              return session.json ? Effect.void : Output.write("\n")
            case "Failed":
              ended = {
                ...ended,
                message_id: part.message_id,
                status: part.error === "cancelled" ? "cancelled" : "failed",
                error: part.error
              }
              return session.json ? Effect.void : Output.write(ended.content === "" ? "" : "\n")
          }
        }),
        Effect.onInterrupt(() => onCtrlC)
      )
      outcome = ended
    }
    if (session.json) {
      yield* Output.json({ conversation_id: conversationId, message_id: sent.message_id, timestamp: sent.timestamp, reply: outcome })
    }
    if (outcome.status === "failed" || outcome.status === "cancelled") {
      return yield* new CliFailure({
        exitCode: server,
        error: outcome.status === "cancelled" ? "reply_cancelled" : "reply_failed",
        details: `The reply ${outcome.status === "cancelled" ? "was cancelled" : "failed"}${outcome.error === undefined ? "" : `: ${outcome.error}`}`
      })
    }
  })).pipe(Command.withDescription("Send a message and print the agent's reply as it streams"))

const title = Command.make("title", {
  deployment: Arguments.deployment,
  conversation: Arguments.conversation,
  title: Args.text({ name: "title" }).pipe(Args.withDescription("The new title, 1 to 80 characters"), Arguments.checkedArg("title", Conversation.Title))
}, ({ conversation: raw, deployment: ref, title }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const conversation = yield* resolveConversation(session, deployment, raw)
    const renamed = yield* session.client.chat.setTitle({
      path: { deploymentId: deployment, conversationId: conversation },
      payload: { title }
    })
    if (session.json) return yield* Output.json(renamed)
    yield* Output.line(`Conversation ${renamed.conversation_id} is titled "${renamed.title}".`)
  })).pipe(Command.withDescription("Set a conversation's title (1 to 80 characters)"))

const history = Command.make("history", { deployment: Arguments.deployment, conversation: Arguments.conversation }, ({ conversation: raw, deployment: ref }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const conversation = yield* resolveConversation(session, deployment, raw)
    const found = yield* session.client.chat.history({ path: { deploymentId: deployment, conversationId: conversation } })
    if (session.json) return yield* Output.json(found)
    for (const m of found.messages) {
      const files = m.attachments.length === 0 ? "" : ` [${m.attachments.map((a) => `${a.filename} (${a.key})`).join(", ")}]`
      const status = m.status === "complete" ? "" : ` (${m.status})`
      yield* Output.line(`${Output.date(m.timestamp)} ${m.role}${status}:${files} ${m.content}`)
    }
  })).pipe(Command.withDescription("Every message of a conversation, oldest first"))

const cancel = Command.make("cancel", { deployment: Arguments.deployment, conversation: Arguments.conversation }, ({ conversation: raw, deployment: ref }) =>
  Effect.gen(function*() {
    const session = yield* Session.current
    const deployment = (yield* DeploymentRefs.resolve(session, ref)).id
    const conversation = yield* resolveConversation(session, deployment, raw)
    const result = yield* session.client.chat.cancel({ path: { deploymentId: deployment, conversationId: conversation } })
    if (session.json) return yield* Output.json(result)
    yield* Output.line(result.status === "cancelled" ? `Cancelled the reply ${result.message_id}.` : "No reply was streaming.")
  })).pipe(Command.withDescription("Stop the reply that is streaming"))

export const command = Command.make("chat").pipe(
  Command.withDescription("Chat with a deployed agent"),
  Command.withSubcommands([list, send, title, history, cancel])
)
