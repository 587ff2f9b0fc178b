// What both baselines share: one better-sqlite3 database (WAL, the pragmas
// of @hosting/storage-sqlite), the seed the runner wrote, bearer tokens
// checked by SHA-256 hash per request, and the chat rules the workloads
// exercise (send, history, replies stored as they arrive and published to
// the conversation's listeners), and the member reads of the `reads`
// workload (profile, agent, deployment history, conversation list). Answers
// carry the same JSON shapes as the example server. Deliberately left out:
// cancellation, resume by Last-Event-ID, titles, attachments.
import Database from "better-sqlite3"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"

const uuidV4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i

const schema = `
CREATE TABLE IF NOT EXISTS users (id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (hash TEXT PRIMARY KEY, user_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS members (
  account TEXT NOT NULL, user_id TEXT NOT NULL, role TEXT NOT NULL, PRIMARY KEY (account, user_id));
CREATE INDEX IF NOT EXISTS members_by_user ON members (user_id, account);
CREATE TABLE IF NOT EXISTS agents (
  account TEXT NOT NULL, name TEXT NOT NULL, json TEXT NOT NULL, member_json TEXT, PRIMARY KEY (account, name));
CREATE TABLE IF NOT EXISTS deployments (
  id TEXT PRIMARY KEY, account TEXT NOT NULL, endpoint TEXT, agent TEXT NOT NULL, build_id TEXT NOT NULL,
  namespace TEXT NOT NULL, status TEXT NOT NULL, deployed_at TEXT NOT NULL, undeployed_at TEXT, spec TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS deployments_by_agent ON deployments (agent, deployed_at);
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY, deployment TEXT NOT NULL, user_id TEXT NOT NULL, title TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS conversations_by_owner ON conversations (deployment, user_id, updated_at);
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, conversation TEXT NOT NULL REFERENCES conversations (id),
  role TEXT NOT NULL, content TEXT NOT NULL, timestamp TEXT NOT NULL, status TEXT NOT NULL, trace_id TEXT);
CREATE INDEX IF NOT EXISTS messages_by_conversation ON messages (conversation, seq);
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, account TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
  deployment TEXT NOT NULL, key TEXT NOT NULL, owner TEXT NOT NULL, path TEXT NOT NULL, filename TEXT NOT NULL,
  content_type TEXT NOT NULL, PRIMARY KEY (deployment, key));
`

const sha256 = (text) => createHash("sha256").update(text).digest("hex")

/** An answer: a status and a JSON body (an object, or a string already encoded). */
const answer = (status, body) => ({ status, body })
const problem = (status, error, details) => answer(status, { error, details })

/**
 * Opens (creating when needed) the database at `filename`, loads the seed
 * file and returns the operations of the baseline servers. `publish(conv,
 * frame)` is called with every reply frame (SSE text) of a conversation.
 */
export const open = ({ filename, seedPath, agent = "echo", messageLimit = 1_000_000, publicUrl }) => {
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("foreign_keys = ON")
  db.pragma("busy_timeout = 5000")
  db.pragma("synchronous = NORMAL")
  db.exec(schema)

  if (seedPath) {
    const seed = JSON.parse(readFileSync(seedPath, "utf8"))
    db.transaction(() => {
      const userRow = db.prepare("INSERT OR REPLACE INTO users (id, name) VALUES (?, ?)")
      const token = db.prepare("INSERT OR REPLACE INTO tokens (hash, user_id) VALUES (?, ?)")
      for (const user of seed.users ?? []) {
        userRow.run(user.id, user.name ?? user.id)
        for (const t of user.tokens) token.run(sha256(t), user.id)
      }
      const member = db.prepare("INSERT OR REPLACE INTO members (account, user_id, role) VALUES (?, ?, ?)")
      for (const m of seed.members ?? []) member.run(m.account, m.user, m.role ?? "member")
      const agentRow = db.prepare("INSERT OR REPLACE INTO agents (account, name, json, member_json) VALUES (?, ?, ?, ?)")
      for (const a of seed.agents ?? []) agentRow.run(a.account, a.name, a.json, a.member_json ?? null)
      const deployment = db.prepare(
        `INSERT OR REPLACE INTO deployments (id, account, endpoint, agent, build_id, namespace, status, deployed_at,
          undeployed_at, spec) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
      )
      // Times as the example server answers them (ISO 8601 with milliseconds).
      const iso = (time) => (time == null ? null : new Date(time).toISOString())
      for (const d of seed.deployments ?? []) {
        deployment.run(d.id, d.account, d.endpoint ?? d.spec?.endpoint ?? null, d.agent ?? `${d.account}/agent`,
          d.build_id ?? "b-1", d.namespace ?? d.id, d.status ?? "running", iso(d.deployed_at ?? 0), iso(d.undeployed_at),
          JSON.stringify(d.spec ?? {}))
      }
      const file = db.prepare(
        "INSERT OR REPLACE INTO files (deployment, key, owner, path, filename, content_type) VALUES (?, ?, ?, ?, ?, ?)"
      )
      for (const f of seed.files ?? []) file.run(f.deployment, f.key, f.owner, f.path, f.filename, f.content_type)
    })()
  }

  const q = {
    token: db.prepare("SELECT user_id FROM tokens WHERE hash = ?").pluck(),
    member: db.prepare("SELECT 1 FROM members WHERE account = ? AND user_id = ?").pluck(),
    user: db.prepare("SELECT id, name FROM users WHERE id = ?"),
    accounts: db.prepare("SELECT account AS name, role FROM members WHERE user_id = ? ORDER BY account"),
    agent: db.prepare("SELECT json FROM agents WHERE account = ? AND name = ?").pluck(),
    memberAgent: db.prepare(
      "SELECT coalesce(a.member_json, a.json) FROM agents a JOIN members m ON m.account = a.account AND m.user_id = ? " +
        "WHERE a.account = ? AND a.name = ?"
    ).pluck(),
    deploymentsOf: db.prepare(
      `SELECT d.id, d.account, d.agent, d.build_id, d.namespace, d.status, d.deployed_at, d.undeployed_at, d.spec
        FROM deployments d JOIN members m ON m.account = d.account AND m.user_id = ?
        WHERE d.agent = ? ORDER BY d.deployed_at DESC, d.id`
    ),
    conversations: db.prepare(
      `SELECT c.id, c.title, c.updated_at,
          (SELECT count(*) FROM messages m WHERE m.conversation = c.id AND m.status = 'streaming') AS streaming
        FROM conversations c WHERE c.deployment = ? AND c.user_id = ? ORDER BY c.updated_at DESC, c.id`
    ),
    deployment: db.prepare("SELECT account, endpoint FROM deployments WHERE id = ?"),
    conversation: db.prepare("SELECT deployment, user_id FROM conversations WHERE id = ?"),
    insertConversation: db.prepare(
      "INSERT INTO conversations (id, deployment, user_id, title, updated_at) VALUES (?, ?, ?, ?, ?)"
    ),
    touchConversation: db.prepare("UPDATE conversations SET updated_at = ? WHERE id = ?"),
    countUser: db.prepare("SELECT count(*) FROM messages WHERE conversation = ? AND role = 'user'").pluck(),
    insertMessage: db.prepare(
      "INSERT INTO messages (id, conversation, role, content, timestamp, status, trace_id) VALUES (?, ?, ?, ?, ?, ?, ?)"
    ),
    updateMessage: db.prepare("UPDATE messages SET content = ?, status = ? WHERE id = ?"),
    history: db.prepare(
      "SELECT id, role, content, timestamp, status, trace_id FROM messages WHERE conversation = ? ORDER BY seq"
    ),
    appendEvent: db.prepare("INSERT INTO events (account, type, data) VALUES (?, ?, ?)"),
    file: db.prepare("SELECT owner, path, filename, content_type FROM files WHERE deployment = ? AND key = ?")
  }

  /** The user of an `Authorization: Bearer` header, or undefined. */
  const authenticate = (header) => {
    const token = /^Bearer (.+)$/.exec(header ?? "")?.[1]
    return token ? q.token.get(sha256(token)) : undefined
  }

  const isMember = (account, user) => q.member.get(account, user) !== undefined

  /**
   * The stored JSON text of an agent, or undefined: what members see (every
   * build) when `user` is a member of the account, else the public one.
   */
  const agentJson = (account, name, user) =>
    (user === undefined ? undefined : q.memberAgent.get(user, account, name)) ?? q.agent.get(account, name)

  /** GET /me: the user and their accounts with roles. */
  const me = (user) => {
    const row = q.user.get(user)
    return answer(200, { user: { id: row.id, name: row.name }, accounts: q.accounts.all(user) })
  }

  /**
   * GET /agents/{account}/{name}/deployment/history: the agent's deployments
   * made by the caller's accounts, most recent first; 403 for a caller who is
   * neither a member of the publisher nor of an account deploying it.
   */
  const deploymentHistory = (user, account, name) => {
    const rows = q.deploymentsOf.all(user, `${account}/${name}`)
    if (rows.length === 0 && !isMember(account, user)) return problem(403, "forbidden", "not a member of the account")
    const deployments = rows.map((d) => ({
      id: d.id,
      account: d.account,
      agent: d.agent,
      agent_name: d.agent.slice(d.agent.indexOf("/") + 1),
      build_id: d.build_id,
      namespace: d.namespace,
      status: d.status,
      deployed_at: d.deployed_at,
      undeployed_at: d.undeployed_at,
      spec: JSON.parse(d.spec),
      // The settings every seeded deployment has: the default strategy for a send while a reply streams.
      settings: { concurrent_send: "interrupt" },
      // A live deployment links its A2A agent card and its MCP server, under the public URL both servers are given.
      ...(publicUrl === undefined || d.undeployed_at !== null
        ? {}
        : {
          links: {
            a2a_card: `${publicUrl}/deployments/${encodeURIComponent(d.id)}/a2a/.well-known/agent-card.json`,
            mcp: `${publicUrl}/deployments/${encodeURIComponent(d.id)}/mcp`
          }
        })
    }))
    return answer(200, { deployments, count: deployments.length })
  }

  /** GET .../chat/conversations: the caller's conversations on the deployment, most recent first. */
  const conversations = (user, deploymentId) => {
    const { refused } = deploymentOf(user, deploymentId)
    if (refused) return refused
    return answer(200, {
      conversations: q.conversations.all(deploymentId, user).map((c) => ({
        conversation_id: c.id,
        title: c.title,
        updated_at: c.updated_at,
        assistant_streaming: c.streaming > 0
      }))
    })
  }

  /** `{ deployment }` when `user` may use it, else `{ refused }` with the answer. */
  const deploymentOf = (user, id) => {
    const deployment = q.deployment.get(id)
    if (!deployment) return { refused: problem(404, "deployment_not_found", `deployment ${id} does not exist`) }
    if (!isMember(deployment.account, user)) return { refused: problem(403, "forbidden", "not a member of the account") }
    return { deployment }
  }

  // Reply frames go to the conversation's open streams; the latest reply of
  // each conversation is kept so that a stream opened late replays it.
  const listeners = new Map()
  const latest = new Map()
  const publish = (conversation, frame) => {
    for (const listener of listeners.get(conversation) ?? []) listener(frame)
  }
  const frame = (event, id, data) => `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`

  const writeReply = (reply) => q.updateMessage.run(reply.content, reply.status, reply.message_id)

  const delta = (conversation, reply, text) => {
    const index = reply.content.length
    reply.content += text
    publish(conversation, frame("message.delta", `${reply.message_id}:${reply.content.length}`, {
      message_id: reply.message_id,
      index,
      delta: text
    }))
  }

  const finish = (conversation, reply, status, error) => {
    reply.status = status
    writeReply(reply)
    publish(conversation, status === "complete"
      ? frame("message.completed", `${reply.message_id}:end`, { message_id: reply.message_id, content: reply.content })
      : frame("message.failed", `${reply.message_id}:end`, { message_id: reply.message_id, error }))
  }

  // The echo agent with no delay: the whole text is one chunk, stored at once.
  const echoReply = (conversation, reply, content) => {
    delta(conversation, reply, content)
    finish(conversation, reply, "complete")
  }

  // The agent's OpenAI-compatible events, fed as text arrives: each chunk is published; `done` once
  // `[DONE]` or a `finish_reason` came.
  const agentEvents = (conversation, reply) => {
    let buffer = ""
    let done = false
    const feed = (text) => {
      buffer += text
      let end
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const event = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        for (const line of event.split("\n")) {
          if (!line.startsWith("data:")) continue
          const data = line.slice(5).trim()
          if (data === "[DONE]") done = true
          else {
            const choice = JSON.parse(data).choices?.[0]
            if (choice?.delta?.content) delta(conversation, reply, choice.delta.content)
            if (choice?.finish_reason) done = true
          }
        }
      }
    }
    return { feed, done: () => done }
  }

  // The agent's OpenAI-compatible stream, stored every 100 ms and at the end.
  const httpReply = async (conversation, reply, endpoint, history) => {
    let flushed = 0
    const timer = setInterval(() => {
      if (reply.content.length !== flushed) {
        flushed = reply.content.length
        writeReply(reply)
      }
    }, 100)
    try {
      const response = await fetch(`${endpoint.replace(/\/$/, "")}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream, application/json" },
        body: JSON.stringify({ model: "bench", messages: history, stream: true }),
        signal: AbortSignal.timeout(120_000)
      })
      if (!response.ok) throw new Error(`The agent answered ${response.status}`)
      const decoder = new TextDecoder()
      const events = agentEvents(conversation, reply)
      for await (const bytes of response.body) events.feed(decoder.decode(bytes, { stream: true }))
      if (!events.done()) throw new Error("The agent's reply broke off")
      finish(conversation, reply, "complete")
    } catch (error) {
      finish(conversation, reply, "failed", error.message)
    } finally {
      clearInterval(timer)
    }
  }

  // The `relay` agent mode: the least a Node server can do per chunk. Node's
  // own client on kept-alive connections, each read parsed as it arrives
  // and published, the reply stored once, at its end. Not a rival design
  // (what arrived is lost if the process dies mid-reply): a floor to read the
  // other targets' per-chunk costs against.
  const relayAgent = new Agent({ keepAlive: true, maxSockets: Infinity })
  const relayReply = (conversation, reply, endpoint, history) => {
    const settle = (status, error) => {
      if (reply.status === "streaming") finish(conversation, reply, status, error)
    }
    const body = JSON.stringify({ model: "bench", messages: history, stream: true })
    const req = request(`${endpoint.replace(/\/$/, "")}/v1/chat/completions`, {
      method: "POST",
      agent: relayAgent,
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), accept: "text/event-stream" }
    }, (res) => {
      res.setEncoding("utf8")
      const events = agentEvents(conversation, reply)
      res.on("data", events.feed)
      res.on("end", () => settle(events.done() ? "complete" : "failed", "The agent's reply broke off"))
      res.on("error", (error) => settle("failed", error.message))
    })
    req.on("error", (error) => settle("failed", error.message))
    req.end(body)
  }

  const sendTransaction = db.transaction((user, deploymentId, conversation, content, timestamp) => {
    const existing = q.conversation.get(conversation)
    if (existing && (existing.user_id !== user || existing.deployment !== deploymentId)) {
      return problem(404, "conversation_not_found", `conversation ${conversation} does not exist`)
    }
    if (existing) q.touchConversation.run(timestamp, conversation)
    else q.insertConversation.run(conversation, deploymentId, user, content.slice(0, 80), timestamp)
    if (q.countUser.get(conversation) >= messageLimit) {
      return problem(409, "message_limit_reached", "the conversation reached its message limit")
    }
    const message_id = `msg-${randomUUID()}`
    q.insertMessage.run(message_id, conversation, "user", content, timestamp, "complete", null)
    const reply = { message_id: `msg-${randomUUID()}`, content: "", status: "streaming" }
    // A reply carries the id of its turn's trace, as the example server's do (issue 30).
    q.insertMessage.run(reply.message_id, conversation, "assistant", "", timestamp, "streaming", randomBytes(16).toString("hex"))
    return answer(200, { message_id, timestamp, reply })
  })

  /** POST .../conversations/{id}/messages: stores the message, answers, then runs the reply. */
  const send = (user, deploymentId, conversation, body) => {
    const { deployment, refused } = deploymentOf(user, deploymentId)
    if (refused) return refused
    if (!uuidV4.test(conversation)) return problem(400, "invalid_request", "conversationId must be a UUID v4")
    const content = typeof body?.content === "string" ? body.content : ""
    if (content.trim() === "") return problem(400, "invalid_request", "content is required")
    const result = sendTransaction(user, deploymentId, conversation, content, new Date().toISOString())
    if (result.status !== 200) return result
    const { reply, ...sent } = result.body
    latest.set(conversation, reply)
    setImmediate(() => {
      if ((agent === "http" || agent === "relay") && deployment.endpoint) {
        const history = q.history.all(conversation)
          .filter((m) => m.status === "complete")
          .map((m) => ({ role: m.role, content: m.content }))
        ;(agent === "relay" ? relayReply : httpReply)(conversation, reply, deployment.endpoint, history)
      } else {
        echoReply(conversation, reply, content)
      }
    })
    return answer(200, sent)
  }

  const ownConversation = (user, deploymentId, conversation) => {
    const { refused } = deploymentOf(user, deploymentId)
    if (refused) return refused
    const existing = q.conversation.get(conversation)
    if (!existing || existing.user_id !== user || existing.deployment !== deploymentId) {
      return problem(404, "conversation_not_found", `conversation ${conversation} does not exist`)
    }
    return undefined
  }

  /** GET .../conversations/{id}/messages. */
  const history = (user, deploymentId, conversation) =>
    ownConversation(user, deploymentId, conversation) ?? answer(200, {
      messages: q.history.all(conversation).map((m) => ({
        message_id: m.id,
        role: m.role,
        content: m.content,
        attachments: [],
        timestamp: m.timestamp,
        status: m.status,
        trace_id: m.trace_id
      }))
    })

  /**
   * GET .../conversations/{id}/stream: checks, then `open(write)` subscribes
   * `write` to the conversation's frames after writing what the latest reply
   * holds so far; it returns the unsubscribe function.
   */
  const stream = (user, deploymentId, conversation) => {
    const refused = ownConversation(user, deploymentId, conversation)
    if (refused) return { refused }
    return {
      open: (write) => {
        const reply = latest.get(conversation)
        if (reply && reply.content !== "") {
          write(frame("message.delta", `${reply.message_id}:${reply.content.length}`, {
            message_id: reply.message_id,
            index: 0,
            delta: reply.content
          }))
        }
        if (reply && reply.status !== "streaming") {
          write(frame(`message.${reply.status === "complete" ? "completed" : "failed"}`, `${reply.message_id}:end`,
            reply.status === "complete"
              ? { message_id: reply.message_id, content: reply.content }
              : { message_id: reply.message_id, error: "failed" }))
        }
        const set = listeners.get(conversation) ?? new Set()
        listeners.set(conversation, set)
        set.add(write)
        return () => {
          set.delete(write)
          if (set.size === 0) listeners.delete(conversation)
        }
      }
    }
  }

  /** Appends an event of `account` and returns its id. */
  const appendEvent = (account, type, data) =>
    String(q.appendEvent.run(account, type, JSON.stringify(data)).lastInsertRowid)

  /** A ready file of `user` on the deployment, or an answer refusing it. */
  const file = (user, deploymentId, key) => {
    const { refused } = deploymentOf(user, deploymentId)
    if (refused) return { refused }
    const row = q.file.get(deploymentId, key)
    if (!row || row.owner !== user) return { refused: problem(404, "file_not_found", `file ${key} does not exist`) }
    return { file: row }
  }

  return {
    authenticate, isMember, agentJson, me, deploymentHistory, conversations, send, history, stream, appendEvent, file,
    close: () => db.close()
  }
}

/** The error body of a 401. */
export const unauthorized = problem(401, "unauthorized", "a valid bearer token is required")
/** The error body of a 404 for a route or agent. */
export const notFound = (details) => problem(404, "not_found", details)
