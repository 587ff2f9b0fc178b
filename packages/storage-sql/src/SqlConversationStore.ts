/**
 * ConversationStore on @effect/sql.
 */
import { SqlClient } from "@effect/sql"
import { Conversation, Deployment, Ids, Ports, Trusted, Turn } from "@hosting/core"
import { Array as Arr, DateTime, Effect, Layer, Option } from "effect"
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
  readonly trace_id: string | null
}

/**
 * A conversation's row as a turn checks it, with the earlier message of the
 * turn's client_message_id (its columns are null when there is none).
 */
interface TurnRow {
  readonly owner_id: string
  readonly deployment_id: string
  readonly user_messages: number | string
  readonly terminal: number | boolean
  readonly earlier_id: string | null
  /** Streaming replies of the conversation (read only for a turn that rejects concurrent sends, else 0). */
  readonly streaming: number | string
  readonly role: "user" | "assistant"
  readonly content: string
  readonly attachments: string
  readonly status: Conversation.MessageStatus
  readonly created_at: string
  readonly trace_id: string | null
}

const toConversation = (row: ConversationRow) =>
  Trusted.make(Conversation.ConversationRecord, {
    id: Conversation.ConversationId.make(row.id, trusted),
    deployment_id: Deployment.DeploymentId.make(row.deployment_id, trusted),
    owner_id: Ids.UserId.make(row.owner_id, trusted),
    title: row.title,
    created_at: timeOf(row.created_at),
    updated_at: timeOf(row.updated_at),
    user_messages: Number(row.user_messages),
    terminal: Boolean(Number(row.terminal)),
    assistant_streaming: Number(row.streaming) > 0
  })

/** A conversation's row as the list reads it: what a summary shows. */
interface SummaryRow {
  readonly id: string
  readonly title: string
  readonly updated_at: string
  readonly streaming: number | string
}

const toSummary = (row: SummaryRow) =>
  Trusted.make(Conversation.ConversationSummary, {
    conversation_id: Conversation.ConversationId.make(row.id, trusted),
    title: row.title,
    updated_at: timeOf(row.updated_at),
    assistant_streaming: Number(row.streaming) > 0
  })

/**
 * The statement of a user's conversation list (exported for the test of
 * its plan): the summary's columns only, and each conversation's streaming
 * replies counted through the index of streaming replies by conversation
 * (migration 0020), so that a list reads none of the other conversations'.
 */
export const listStatement = (sql: SqlClient.SqlClient, deploymentId: string, ownerId: string) =>
  sql<SummaryRow>`SELECT c.id, c.title, c.updated_at,
      (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND m.status = 'streaming') AS streaming
    FROM conversations c WHERE c.deployment_id = ${deploymentId} AND c.owner_id = ${ownerId}
    ORDER BY c.updated_at DESC, c.id`

const toMessage = (row: MessageRow) =>
  Trusted.make(Conversation.Message, {
    message_id: Conversation.MessageId.make(row.id, trusted),
    role: row.role,
    content: row.content,
    attachments: (JSON.parse(row.attachments) as Array<Conversation.Attachment>).map((a) => Trusted.make(Conversation.Attachment, a)),
    timestamp: timeOf(row.created_at),
    status: row.status,
    trace_id: row.trace_id
  })

/**
 * On Postgres a process owns its reply leases under a session-level advisory
 * lock `(processLockSpace, key)`, held on a connection of its own
 * (@hosting/storage-postgres, `PgProcessLock`); its leases name it
 * `processOwner(key)`. The database releases the lock when that connection
 * goes: a lease whose owner's lock nobody holds is a dead process's.
 */
export const processLockSpace = 0x686f7374
const processOwnerPrefix = "pg-process-"
export const processOwner = (key: number) => `${processOwnerPrefix}${key}`

export const make: Effect.Effect<Ports.ConversationStore["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const select = sql.literal(`SELECT c.id, c.deployment_id, c.owner_id, c.title, c.created_at, c.updated_at, c.user_messages,
      c.terminal, (SELECT COUNT(*) FROM messages m WHERE m.conversation_id = c.id AND m.status = 'streaming') AS streaming
    FROM conversations c`)
  const messageColumns = sql.literal("id, conversation_id, role, content, attachments, status, created_at, trace_id")

  const find = (id: Conversation.ConversationId) =>
    sql<ConversationRow>`${select} WHERE c.id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toConversation)),
      storageError("SqlConversationStore.find")
    )

  const listFor = (deploymentId: Deployment.DeploymentId, ownerId: Ids.UserId) =>
    listStatement(sql, deploymentId, ownerId).pipe(
      Effect.map((rows) => rows.map(toSummary)),
      storageError("SqlConversationStore.listFor")
    )

  const setTitle = (id: Conversation.ConversationId, title: string, now: DateTime.Utc) =>
    sql`UPDATE conversations SET title = ${title}, updated_at = ${timeText(now)} WHERE id = ${id}`.pipe(
      Effect.asVoid,
      storageError("SqlConversationStore.setTitle")
    )

  /** A message as a row of `messages`. */
  const messageRow = (
    conversationId: Conversation.ConversationId,
    message: Conversation.Message,
    clientMessageId: Option.Option<string>,
    lease: Ports.ReplyLease | undefined
  ) => {
    const at = timeText(message.timestamp)
    return {
      id: message.message_id,
      conversation_id: conversationId,
      role: message.role,
      content: message.content,
      attachments: JSON.stringify(message.attachments),
      status: message.status,
      client_message_id: Option.getOrNull(clientMessageId),
      trace_id: message.trace_id,
      created_at: at,
      updated_at: at,
      lease_owner: lease?.owner ?? null,
      lease_expires_at: lease === undefined ? null : timeText(lease.expires_at)
    }
  }

  const append: Ports.ConversationStore["Type"]["append"] = Effect.fnUntraced(
    function*({ client_message_id, conversation_id, lease, message }: Parameters<Ports.ConversationStore["Type"]["append"]>[0]) {
      const at = timeText(message.timestamp)
      yield* sql`INSERT INTO messages ${sql.insert(messageRow(conversation_id, message, client_message_id, lease))}`
      yield* message.role === "user"
        ? sql`UPDATE conversations SET user_messages = user_messages + 1, updated_at = ${at} WHERE id = ${conversation_id}`
        : sql`UPDATE conversations SET updated_at = ${at} WHERE id = ${conversation_id}`
    },
    storageError("SqlConversationStore.append")
  )

  // SQLite serialises writers already; Postgres locks the conversation's row for the rest of the transaction.
  const lockRow = sql.onDialectOrElse({ pg: () => sql.literal("FOR UPDATE OF c"), orElse: () => sql.literal("") })

  /** The rows of a turn's messages: the user's, then the reply's (holding the lease). */
  const turnRows = (turn: Ports.TurnInput) => [
    messageRow(turn.conversation_id, turn.message, turn.client_message_id, undefined),
    messageRow(turn.conversation_id, turn.reply, Option.none(), turn.lease)
  ] as const

  /** Both messages of a turn, in one statement (the user message first, so it sorts first). */
  const insertTurn = (turn: Ports.TurnInput) => sql`INSERT INTO messages ${sql.insert(turnRows(turn))}`

  /** The conversation's row with the counts of its first turn. */
  const conversationInsert = (turn: Ports.TurnInput, accepted: Turn.Accept) => {
    const at = timeText(turn.message.timestamp)
    return sql`INSERT INTO conversations (id, deployment_id, owner_id, title, created_at, updated_at, user_messages, terminal)
      VALUES (${turn.conversation_id}, ${turn.deployment_id}, ${turn.owner_id}, ${turn.title}, ${at}, ${at},
        ${accepted.user_messages}, ${accepted.terminal ? 1 : 0})
      ON CONFLICT (id) DO NOTHING RETURNING id`
  }

  /** The conversation, then its first turn when it was new: `createWithTurn` where the dialect has no writing `WITH`. */
  const createThenInsert = Effect.fnUntraced(function*(turn: Ports.TurnInput, accepted: Turn.Accept) {
    const created = yield* conversationInsert(turn, accepted)
    if (created.length === 0) return false
    yield* insertTurn(turn)
    return true
  })

  /**
   * Creates the conversation with its first turn; `false` (and nothing
   * written) when it exists already. On Postgres one statement writes the
   * conversation and both messages (a round trip instead of two); SQLite,
   * which has no writing `WITH`, takes two.
   */
  const createWithTurn = (turn: Ports.TurnInput, accepted: Turn.Accept) =>
    sql.onDialectOrElse({
      pg: () => {
        const rows = turnRows(turn)
        const columns = Object.keys(rows[0]) as ReadonlyArray<keyof typeof rows[0]>
        const names = sql.csv(columns.map((column) => sql`${sql(column)}`))
        // The messages in their order (the user message first, so it sorts first), only when the conversation is new.
        return Effect.map(
          sql`WITH created AS (${conversationInsert(turn, accepted)})
            INSERT INTO messages (${names})
            SELECT ${names} FROM (VALUES ${
            sql.csv(rows.map((row, n) => sql`(${sql.literal(String(n))}, ${sql.csv(columns.map((column) => sql`${row[column]}`))})`))
          }) AS turn(n, ${names})
            WHERE EXISTS (SELECT 1 FROM created) ORDER BY n RETURNING id`,
          (inserted) => inserted.length > 0
        )
      },
      orElse: () => createThenInsert(turn, accepted)
    })

  /** What a turn's row tells `Turn.decide`: the conversation, and the earlier message of the turn's client_message_id. */
  const storedOf = (turn: Ports.TurnInput, row: TurnRow): Turn.Stored => ({
    owner_id: row.owner_id,
    deployment_id: row.deployment_id,
    user_messages: Number(row.user_messages),
    terminal: Boolean(Number(row.terminal)),
    streaming: Number(row.streaming) > 0,
    earlier: row.earlier_id === null
      ? Option.none()
      : Option.some(toMessage({ ...row, id: row.earlier_id, conversation_id: turn.conversation_id }))
  })

  /** Starts a turn in a conversation that may exist: the decision on the locked row, then the writes. */
  const continueTurn = Effect.fnUntraced(function*(turn: Ports.TurnInput) {
      // Counted only when the turn asks (the reject strategy): other turns do not pay for the read.
      const streaming = turn.reject_if_streaming === true
        ? sql`(SELECT COUNT(*) FROM messages s WHERE s.conversation_id = c.id AND s.status = 'streaming')`
        : sql.literal("0")
      const [row] = yield* sql<TurnRow>`SELECT c.owner_id, c.deployment_id, c.user_messages, c.terminal,
          ${streaming} AS streaming, m.id AS earlier_id, m.role, m.content, m.attachments, m.status, m.created_at, m.trace_id
        FROM conversations c
        LEFT JOIN messages m ON m.conversation_id = c.id AND m.client_message_id = ${Option.getOrNull(turn.client_message_id)}
        WHERE c.id = ${turn.conversation_id} ${lockRow}`
      // Absent only when a first message is refused (a limit below one): the decision refuses it again.
      const decision = Turn.decide(turn, row === undefined ? Option.none() : Option.some(storedOf(turn, row)))
      if (decision._tag !== "Accept") return decision
      yield* insertTurn(turn)
      yield* sql`UPDATE conversations SET user_messages = ${decision.user_messages},
          updated_at = ${timeText(turn.message.timestamp)}, terminal = ${decision.terminal ? 1 : 0}
        WHERE id = ${turn.conversation_id}`
      return Turn.started(decision)
  })

  /**
   * A turn is tried as a first message: the conversation is created with it
   * in one statement, without a read. When the conversation exists, its
   * locked row is read and the turn decided on it.
   */
  const startTurn: Ports.ConversationStore["Type"]["startTurn"] = Effect.fnUntraced(
    function*(turn: Ports.TurnInput) {
      const first = Turn.decide(turn, Option.none())
      if (first._tag !== "Accept" || !(yield* createWithTurn(turn, first))) return yield* continueTurn(turn)
      return Turn.started(first)
    },
    storageError("SqlConversationStore.startTurn")
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

  // Bound parameters per statement stay far below SQLite's limit (32,766).
  const flushBatch = 500
  const flushReplies: Ports.ConversationStore["Type"]["flushReplies"] = (progress, now) =>
    Effect.forEach(Arr.chunksOf(progress, flushBatch), (batch) =>
      sql`WITH progress(id, content) AS (VALUES ${sql.csv(batch.map(({ content, id }) => sql`(${id}, ${content})`))})
        UPDATE messages SET content = progress.content, updated_at = ${timeText(now)}
        FROM progress WHERE messages.id = progress.id AND messages.status = 'streaming'`, { discard: true }).pipe(
      storageError("SqlConversationStore.flushReplies")
    )

  const renewLeases = (owner: string, expiresAt: DateTime.Utc) =>
    sql`UPDATE messages SET lease_expires_at = ${timeText(expiresAt)} WHERE lease_owner = ${owner} AND status = 'streaming'`.pipe(
      Effect.asVoid,
      storageError("SqlConversationStore.renewLeases")
    )

  // On Postgres, the owners of streaming replies whose process lock nobody holds (the live owners are read once).
  const goneOwners = sql.onDialectOrElse({
    pg: () =>
      sql<{ readonly lease_owner: string }>`SELECT DISTINCT lease_owner FROM messages
        WHERE status = 'streaming' AND lease_owner LIKE ${`${processOwnerPrefix}%`} AND lease_owner NOT IN (
          SELECT ${processOwnerPrefix} || l.objid::text FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.classid = ${processLockSpace}::oid AND l.objsubid = 2 AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))`.pipe(
        Effect.map((rows) => rows.map((row) => row.lease_owner))
      ),
    orElse: () => Effect.succeed([])
  }).pipe(storageError("SqlConversationStore.goneOwners"))

  const closeStreaming = Effect.fnUntraced(
    function*(leaseEndedBefore: Option.Option<DateTime.Utc>, ownersGone: ReadonlyArray<string> = []) {
      const now = timeText(DateTime.unsafeNow())
      const gone = ownersGone.length === 0 ? sql.literal("") : sql`OR ${sql.in("lease_owner", ownersGone)}`
      const rows = yield* Option.match(leaseEndedBefore, {
        onNone: () =>
          sql<MessageRow>`UPDATE messages SET status = 'failed', updated_at = ${now} WHERE status = 'streaming'
            RETURNING ${messageColumns}`,
        onSome: (before) =>
          sql<MessageRow>`UPDATE messages SET status = 'failed', updated_at = ${now}
            WHERE status = 'streaming' AND (lease_expires_at IS NULL OR lease_expires_at < ${timeText(before)} ${gone})
            RETURNING ${messageColumns}`
      })
      return rows.map((row) => ({ conversation_id: Conversation.ConversationId.make(row.conversation_id, trusted), message: toMessage(row) }))
    },
    storageError("SqlConversationStore.closeStreaming")
  )

  return Ports.ConversationStore.of({
    find,
    listFor,
    setTitle,
    startTurn,
    append,
    messages,
    latestReply,
    updateMessage,
    flushReplies,
    renewLeases,
    goneOwners,
    closeStreaming
  })
})

export const layer = Layer.effect(Ports.ConversationStore, make)
