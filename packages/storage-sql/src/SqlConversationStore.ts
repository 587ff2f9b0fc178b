/**
 * ConversationStore on @effect/sql.
 */
import { SqlClient } from "@effect/sql"
import { Conversation, Deployment, Ids, Ports } from "@hosting/core"
import { DateTime, Effect, Layer, Option } from "effect"
import { storageError, timeOf, timeText, trusted } from "./internal/sql.js"

interface ConversationRow {
  readonly id: string
  readonly deployment_id: string
  readonly owner_id: string
  readonly title: string
  readonly created_at: string
  readonly updated_at: string
  readonly user_messages: number | string
  readonly terminal: number | boolean
  readonly streaming: number | string
}

interface MessageRow {
  readonly id: string
  readonly conversation_id: string
  readonly role: "user" | "assistant"
  readonly content: string
  readonly attachments: string
  readonly status: Conversation.MessageStatus
  readonly created_at: string
}

const toConversation = (row: ConversationRow) =>
  new Conversation.ConversationRecord({
    id: Conversation.ConversationId.make(row.id),
    deployment_id: Deployment.DeploymentId.make(row.deployment_id),
    owner_id: Ids.UserId.make(row.owner_id),
    title: row.title,
    created_at: timeOf(row.created_at),
    updated_at: timeOf(row.updated_at),
    user_messages: Number(row.user_messages),
    terminal: Boolean(Number(row.terminal)),
    assistant_streaming: Number(row.streaming) > 0
  }, trusted)

const toMessage = (row: MessageRow) =>
  new Conversation.Message({
    message_id: Conversation.MessageId.make(row.id),
    role: row.role,
    content: row.content,
    attachments: (JSON.parse(row.attachments) as Array<Conversation.Attachment>).map((a) => new Conversation.Attachment(a, trusted)),
    timestamp: timeOf(row.created_at),
    status: row.status
  }, trusted)

export const make: Effect.Effect<Ports.ConversationStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const select = sql.literal(`SELECT c.id, c.deployment_id, c.owner_id, c.title, c.created_at, c.updated_at, c.user_messages,
      c.terminal, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND m.status = 'streaming') AS streaming
    FROM conversations c`)
  const messageColumns = sql.literal("id, conversation_id, role, content, attachments, status, created_at")

  const find = (id: Conversation.ConversationId) =>
    sql<ConversationRow>`${select} WHERE c.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toConversation)),
      storageError("SqlConversationStore.find")
    )

  const ensure: Ports.ConversationStore["Type"]["ensure"] = (input) =>
    Effect.gen(function*() {
      const now = timeText(input.now)
      yield* sql`INSERT INTO conversations (id, deployment_id, owner_id, title, created_at, updated_at, user_messages, terminal)
        VALUES (${input.id}, ${input.deployment_id}, ${input.owner_id}, ${input.title}, ${now}, ${now}, 0, 0)
        ON CONFLICT (id) DO NOTHING`
      // SQLite serialises writers already; Postgres locks the row for the rest of the transaction.
      yield* sql.onDialectOrElse({
        pg: () => sql`SELECT id FROM conversations WHERE id = ${input.id} FOR UPDATE`,
        orElse: () => Effect.succeed([])
      })
      const rows = yield* sql<ConversationRow>`${select} WHERE c.id = ${input.id}`
      return toConversation(rows[0]!)
    }).pipe(storageError("SqlConversationStore.ensure"))

  const listFor = (deploymentId: Deployment.DeploymentId, ownerId: Ids.UserId) =>
    sql<ConversationRow>`${select} WHERE c.deployment_id = ${deploymentId} AND c.owner_id = ${ownerId}
      ORDER BY c.updated_at DESC, c.id`.pipe(
      Effect.map((rows) => rows.map(toConversation)),
      storageError("SqlConversationStore.listFor")
    )

  const setTitle = (id: Conversation.ConversationId, title: string, now: DateTime.Utc) =>
    sql`UPDATE conversations SET title = ${title}, updated_at = ${timeText(now)} WHERE id = ${id}`.pipe(
      Effect.asVoid,
      storageError("SqlConversationStore.setTitle")
    )

  const markTerminal = (id: Conversation.ConversationId) =>
    sql`UPDATE conversations SET terminal = 1 WHERE id = ${id}`.pipe(Effect.asVoid, storageError("SqlConversationStore.markTerminal"))

  const append: Ports.ConversationStore["Type"]["append"] = ({ client_message_id, conversation_id, lease, message }) =>
    Effect.gen(function*() {
      const at = timeText(message.timestamp)
      yield* sql`INSERT INTO messages (id, conversation_id, role, content, attachments, status, client_message_id, created_at, updated_at,
          lease_owner, lease_expires_at)
        VALUES (${message.message_id}, ${conversation_id}, ${message.role}, ${message.content},
          ${JSON.stringify(message.attachments)}, ${message.status}, ${Option.getOrNull(client_message_id)}, ${at}, ${at},
          ${lease?.owner ?? null}, ${lease === undefined ? null : timeText(lease.expires_at)})`
      yield* message.role === "user"
        ? sql`UPDATE conversations SET user_messages = user_messages + 1, updated_at = ${at} WHERE id = ${conversation_id}`
        : sql`UPDATE conversations SET updated_at = ${at} WHERE id = ${conversation_id}`
    }).pipe(storageError("SqlConversationStore.append"))

  const findByClientMessageId = (conversationId: Conversation.ConversationId, clientMessageId: string) =>
    sql<MessageRow>`SELECT ${messageColumns} FROM messages
      WHERE conversation_id = ${conversationId} AND client_message_id = ${clientMessageId}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toMessage)),
      storageError("SqlConversationStore.findByClientMessageId")
    )

  const messages = (conversationId: Conversation.ConversationId) =>
    sql<MessageRow>`SELECT ${messageColumns} FROM messages WHERE conversation_id = ${conversationId} ORDER BY seq`.pipe(
      Effect.map((rows) => rows.map(toMessage)),
      storageError("SqlConversationStore.messages")
    )

  const latestReply = (conversationId: Conversation.ConversationId) =>
    sql<MessageRow>`SELECT ${messageColumns} FROM messages WHERE conversation_id = ${conversationId} AND role = 'assistant'
      ORDER BY seq DESC LIMIT 1`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toMessage)),
      storageError("SqlConversationStore.latestReply")
    )

  const updateMessage: Ports.ConversationStore["Type"]["updateMessage"] = (id, content, status, now) =>
    sql`UPDATE messages SET content = ${content}, status = ${status}, updated_at = ${timeText(now)} WHERE id = ${id}`.pipe(
      Effect.asVoid,
      storageError("SqlConversationStore.updateMessage")
    )

  const renewLeases = (owner: string, expiresAt: DateTime.Utc) =>
    sql`UPDATE messages SET lease_expires_at = ${timeText(expiresAt)} WHERE lease_owner = ${owner} AND status = 'streaming'`.pipe(
      Effect.asVoid,
      storageError("SqlConversationStore.renewLeases")
    )

  const closeStreaming = (leaseEndedBefore: Option.Option<DateTime.Utc>) =>
    Effect.gen(function*() {
      const now = timeText(DateTime.unsafeNow())
      const rows = yield* Option.match(leaseEndedBefore, {
        onNone: () =>
          sql<MessageRow>`UPDATE messages SET status = 'failed', updated_at = ${now} WHERE status = 'streaming'
            RETURNING ${messageColumns}`,
        onSome: (before) =>
          sql<MessageRow>`UPDATE messages SET status = 'failed', updated_at = ${now}
            WHERE status = 'streaming' AND (lease_expires_at IS NULL OR lease_expires_at < ${timeText(before)})
            RETURNING ${messageColumns}`
      })
      return rows.map((row) => ({ conversation_id: Conversation.ConversationId.make(row.conversation_id), message: toMessage(row) }))
    }).pipe(storageError("SqlConversationStore.closeStreaming"))

  return Ports.ConversationStore.of({
    find,
    ensure,
    listFor,
    setTitle,
    markTerminal,
    append,
    findByClientMessageId,
    messages,
    latestReply,
    updateMessage,
    renewLeases,
    closeStreaming
  })
})

export const layer = Layer.effect(Ports.ConversationStore, make)
