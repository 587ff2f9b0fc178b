/**
 * Chat with a deployment: the user's conversations (with a live "replying"
 * mark from `assistant_streaming`, renamed inline), the messages of one, and
 * sending with attachments. The reply arrives piece by piece on the
 * conversation's reply stream (`@hosting/client`'s `ReplyStream`), each
 * delta placed at its `index`; it can be cancelled. A conversation at its
 * message limit (409) asks for a new conversation.
 */
import { ReplyStream } from "@hosting/client"
import { Effect } from "effect"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import * as id from "../api/ids"
import { placeDelta } from "../api/replies"
import { asProblem, baseUrl, call, isAbort, type Problem, subscribe } from "../api/runtime"
import type { Uploaded } from "../api/upload"
import { downloadUrl } from "../api/upload"
import { FilePicker, UploadList, useUploads } from "../components/Uploads"
import { Badge, ErrorNotice, Loading, PageHeading, When } from "../components/ui"
import { useAction, useInterval, useResource } from "../hooks"
import { Link, navigate, pathOf } from "../router"

/** A message as the page shows it. */
interface ChatMessage {
  readonly id: string
  readonly role: "user" | "assistant"
  readonly content: string
  readonly attachments: ReadonlyArray<{ readonly key: string; readonly filename: string }>
  readonly status: "sending" | "complete" | "streaming" | "failed" | "cancelled"
  readonly error?: string | undefined
  readonly timestamp?: unknown
}

/** Most attachments on one message (the server's default limit; a lower one answers 413 with its details). */
const maxAttachments = 16

const ConversationList = ({ deploymentId, current, conversations, onRenamed }: {
  readonly deploymentId: string
  readonly current: string | undefined
  readonly conversations: ReadonlyArray<{ readonly conversation_id: string; readonly title: string; readonly updated_at: unknown; readonly assistant_streaming: boolean }>
  readonly onRenamed: (conversationId: string, title: string) => void
}) => {
  const [editing, setEditing] = useState<string | undefined>(undefined)
  const [draft, setDraft] = useState("")
  const rename = useAction(async (conversationId: string, title: string) => {
    const renamed = await call((client) =>
      client.chat.setTitle({ path: { deploymentId: id.deployment(deploymentId), conversationId: id.conversation(conversationId) }, payload: { title } })
    )
    onRenamed(renamed.conversation_id, renamed.title)
    setEditing(undefined)
  })
  return (
    <>
      <ErrorNotice error={rename.error} context="Renaming failed" />
      {conversations.length === 0 ? <p class="muted">No conversations yet.</p> : (
        <ul class="conversations">
          {conversations.map((conversation) => {
            const selected = conversation.conversation_id === current
            const inputId = `title-${conversation.conversation_id}`
            return (
              <li key={conversation.conversation_id} class={selected ? "selected" : ""}>
                {editing === conversation.conversation_id ? (
                  <form
                    class="rename"
                    onSubmit={(event) => {
                      event.preventDefault()
                      if (draft.trim() !== "") void rename.run(conversation.conversation_id, draft.trim())
                    }}
                  >
                    <label for={inputId} class="visually-hidden">
                      New title
                    </label>
                    <input
                      id={inputId}
                      value={draft}
                      maxLength={200}
                      autoFocus
                      onInput={(event) => setDraft(event.currentTarget.value)}
                      onKeyDown={(event) => {
                        if (event.key === "Escape") {
                          event.preventDefault()
                          setEditing(undefined)
                        }
                      }}
                    />
                    <button type="submit" class="primary small" disabled={rename.busy}>
                      Save
                    </button>
                    <button type="button" class="secondary small" onClick={() => setEditing(undefined)}>
                      Cancel
                    </button>
                  </form>
                ) : (
                  <div class="conversation-row">
                    <Link
                      href={pathOf("deployments", deploymentId, "chat", conversation.conversation_id)}
                      aria-current={selected ? "page" : undefined}
                      class="conversation-title"
                    >
                      {conversation.title}
                    </Link>
                    {conversation.assistant_streaming && <Badge tone="info">replying…</Badge>}
                    <span class="muted small">
                      <When value={conversation.updated_at} />
                    </span>
                    <button
                      type="button"
                      class="link-button small"
                      aria-label={`Rename ${conversation.title}`}
                      onClick={() => {
                        rename.reset()
                        setDraft(conversation.title)
                        setEditing(conversation.conversation_id)
                      }}
                    >
                      Rename
                    </button>
                  </div>
                )}
              </li>
            )
          })}
        </ul>
      )}
    </>
  )
}

const MessageView = ({ deploymentId, message }: { readonly deploymentId: string; readonly message: ChatMessage }) => (
  <li
    class={`message message-${message.role} message-${message.status}`}
    aria-busy={message.status === "streaming" || message.status === "sending"}
    data-message-id={message.id}
  >
    <p class="message-meta">
      <span class="message-author">{message.role === "user" ? "You" : "Agent"}</span>
      {message.status === "streaming" && <Badge tone="info">streaming</Badge>}
      {message.status === "sending" && <Badge tone="neutral">sending</Badge>}
      {message.status === "cancelled" && <Badge tone="warn">cancelled</Badge>}
      {message.status === "failed" && <Badge tone="error">failed</Badge>}
    </p>
    <div class="message-text">{message.content}</div>
    {message.error !== undefined && message.status === "failed" && <p class="field-error">{message.error}</p>}
    {message.attachments.length > 0 && (
      <ul class="attachments" aria-label="Attachments">
        {message.attachments.map((attachment) => (
          <li key={attachment.key}>
            <a href={downloadUrl(deploymentId, attachment.key)} download={attachment.filename}>
              {attachment.filename}
            </a>
          </li>
        ))}
      </ul>
    )}
  </li>
)

export const ChatPage = ({ deploymentId, conversationId }: { readonly deploymentId: string; readonly conversationId: string | undefined }) => {
  const deployment = useResource(
    (signal) => call((client) => client.deployments.get({ path: { deploymentId: id.deployment(deploymentId) } }), signal),
    [deploymentId]
  )
  const list = useResource(
    (signal) => call((client) => client.chat.list({ path: { deploymentId: id.deployment(deploymentId) } }), signal),
    [deploymentId]
  )
  const conversations = list.data?.conversations ?? []
  const [messages, setMessages] = useState<ReadonlyArray<ChatMessage>>([])
  const [historyError, setHistoryError] = useState<Problem | undefined>(undefined)
  const [loadingHistory, setLoadingHistory] = useState(false)
  const [streamFor, setStreamFor] = useState<string | undefined>(undefined)
  const [streamState, setStreamState] = useState<"idle" | "live" | "reconnecting" | "stopped">("idle")
  const [streamError, setStreamError] = useState<Problem | undefined>(undefined)
  const [text, setText] = useState("")
  const [sendError, setSendError] = useState<Problem | undefined>(undefined)
  const [limitReached, setLimitReached] = useState(false)
  const [sending, setSending] = useState(false)
  const [attached, setAttached] = useState<ReadonlyArray<Uploaded>>([])
  const created = useRef<string | undefined>(undefined)
  const uploads = useUploads(deploymentId, (file) => setAttached((current) => [...current, file]))

  const replying = messages.some((m) => m.role === "assistant" && m.status === "streaming") ||
    conversations.some((c) => c.conversation_id === conversationId && c.assistant_streaming)
  const anyStreaming = replying || conversations.some((c) => c.assistant_streaming)
  // The list has no stream of its own: it is read again while something streams, and now and then.
  useInterval(list.reload, anyStreaming ? 1500 : 15_000, true)

  // A conversation opened: its history, then its reply stream.
  useEffect(() => {
    setSendError(undefined)
    setLimitReached(false)
    setStreamError(undefined)
    if (conversationId === undefined) {
      setMessages([])
      setHistoryError(undefined)
      setStreamFor(undefined)
      return
    }
    if (created.current === conversationId) {
      // Just created by this page's first send: the messages shown are current.
      created.current = undefined
      setStreamFor(conversationId)
      return
    }
    setStreamFor(undefined)
    setMessages([])
    setHistoryError(undefined)
    setLoadingHistory(true)
    const controller = new AbortController()
    call(
      (client) => client.chat.history({ path: { deploymentId: id.deployment(deploymentId), conversationId: id.conversation(conversationId) } }),
      controller.signal
    ).then(
      (history) => {
        setMessages(history.messages.map((m) => ({
          id: m.message_id,
          role: m.role,
          content: m.content,
          attachments: m.attachments,
          status: m.status,
          timestamp: m.timestamp
        })))
        setLoadingHistory(false)
        setStreamFor(conversationId)
      },
      (failure: unknown) => {
        if (isAbort(failure)) return
        setHistoryError(asProblem(failure))
        setLoadingHistory(false)
      }
    )
    return () => controller.abort()
  }, [deploymentId, conversationId])

  // The reply stream of the open conversation, for as long as it is open.
  useEffect(() => {
    if (streamFor === undefined) {
      setStreamState("idle")
      return
    }
    setStreamState("live")
    const upsert = (messageId: string, change: (message: ChatMessage) => ChatMessage) =>
      setMessages((current) => {
        const found = current.some((m) => m.id === messageId)
        const base: ChatMessage = { id: messageId, role: "assistant", content: "", attachments: [], status: "streaming" }
        return found ? current.map((m) => (m.id === messageId ? change(m) : m)) : [...current, change(base)]
      })
    return subscribe(
      ReplyStream.events({
        baseUrl,
        deploymentId,
        conversationId: streamFor,
        onReconnect: () => Effect.sync(() => setStreamState("reconnecting"))
      }),
      {
        onItem: (event) => {
          switch (event._tag) {
            case "Delta":
              setStreamState("live")
              upsert(event.message_id, (m) => ({ ...m, status: "streaming", content: placeDelta(m.content, event.index, event.delta) }))
              return
            case "Completed":
              upsert(event.message_id, (m) => ({ ...m, status: "complete", content: event.content }))
              list.reload()
              return
            case "Failed":
              upsert(event.message_id, (m) => ({ ...m, status: event.error === "cancelled" ? "cancelled" : "failed", error: event.error }))
              list.reload()
              return
            case "Heartbeat":
              setStreamState("live")
              return
          }
        },
        onError: (problem) => {
          setStreamState("stopped")
          setStreamError(problem)
        }
      }
    )
  }, [deploymentId, streamFor])

  const send = useCallback(async () => {
    const content = text.trim()
    const files = attached
    if (content === "" && files.length === 0) return
    if (files.length > maxAttachments) {
      setSendError(asProblem(new Error(`At most ${maxAttachments} files can be attached to one message.`)))
      return
    }
    const target = conversationId ?? crypto.randomUUID()
    const temporary = `sending-${crypto.randomUUID()}`
    const clientMessageId = crypto.randomUUID()
    setSending(true)
    setSendError(undefined)
    setMessages((current) => [
      ...current,
      { id: temporary, role: "user", content, attachments: files.map((f) => ({ key: f.key, filename: f.filename })), status: "sending" }
    ])
    setText("")
    try {
      const sent = await call((client) =>
        client.chat.send({
          path: { deploymentId: id.deployment(deploymentId), conversationId: id.conversation(target) },
          payload: {
            ...(content === "" ? {} : { content }),
            ...(files.length === 0 ? {} : { attachments: files.map((f) => ({ key: f.key })) }),
            client_message_id: clientMessageId
          }
        })
      )
      setMessages((current) => current.map((m) => (m.id === temporary ? { ...m, id: sent.message_id, status: "complete", timestamp: sent.timestamp } : m)))
      setAttached([])
      uploads.clear()
      if (conversationId === undefined) {
        created.current = target
        navigate(pathOf("deployments", deploymentId, "chat", target), { replace: true })
      }
      list.reload()
    } catch (failure) {
      const problem = asProblem(failure)
      setMessages((current) => current.filter((m) => m.id !== temporary))
      setText(content)
      // A reply still streams on a deployment that rejects such sends: the text stays, to send again once it ended.
      if (problem.code === "reply_in_progress") setSendError(problem)
      else if (problem.status === 409 || problem.code === "message_limit_reached") setLimitReached(true)
      else setSendError(problem)
    } finally {
      setSending(false)
    }
  }, [text, attached, conversationId, deploymentId, list.reload, uploads.clear])

  const cancel = useAction(() =>
    call((client) =>
      client.chat.cancel({ path: { deploymentId: id.deployment(deploymentId), conversationId: id.conversation(conversationId ?? "") } })
    )
  )

  const current = conversations.find((c) => c.conversation_id === conversationId)
  const title = conversationId === undefined ? "New conversation" : current?.title ?? "Conversation"
  const agent = deployment.data?.agent
  return (
    <>
      <PageHeading title={`Chat · ${deploymentId}`}>
        Chat{agent !== undefined && <> with <span class="muted">{agent}</span></>}
      </PageHeading>
      <nav aria-label="Deployment" class="subnav">
        <span>
          Deployment <code>{deploymentId}</code>
        </span>
        <Link href={pathOf("deployments", deploymentId, "files")}>Files</Link>
        {deployment.data !== undefined && (
          <Link href={`${pathOf("agents", ...deployment.data.agent.split("/"), "deployments")}?deployment=${encodeURIComponent(deploymentId)}`}>
            Deployment details
          </Link>
        )}
      </nav>
      <ErrorNotice error={deployment.error} context="The deployment could not be read" />
      <div class="chat">
        <aside class="chat-list card" aria-labelledby="conversations-heading">
          <div class="section-head">
            <h2 id="conversations-heading">Conversations</h2>
            <Link class="button secondary small" href={pathOf("deployments", deploymentId, "chat")}>
              New
            </Link>
          </div>
          <ErrorNotice error={list.error} context="The conversations could not be listed" />
          {list.data === undefined && list.loading ? <Loading /> : (
            <ConversationList
              deploymentId={deploymentId}
              current={conversationId}
              conversations={conversations}
              onRenamed={(renamedId, newTitle) =>
                list.set((data) =>
                  data === undefined ? data : {
                    ...data,
                    conversations: data.conversations.map((c) => (c.conversation_id === renamedId ? { ...c, title: newTitle } : c))
                  }
                )}
            />
          )}
        </aside>
        <section class="chat-main card" aria-labelledby="conversation-heading">
          <div class="section-head">
            <h2 id="conversation-heading">{title}</h2>
            {streamState === "reconnecting" && <Badge tone="warn">reconnecting…</Badge>}
          </div>
          <ErrorNotice error={historyError} context="The conversation could not be read" />
          <ErrorNotice error={streamError} context="The reply stream stopped" />
          {loadingHistory && <Loading label="Loading the messages…" />}
          <ol class="messages" aria-live="polite" aria-label="Messages">
            {messages.map((message) => <MessageView key={message.id} deploymentId={deploymentId} message={message} />)}
          </ol>
          {messages.length === 0 && !loadingHistory && historyError === undefined && (
            <p class="muted">{conversationId === undefined ? "Write the first message to start a conversation." : "No messages."}</p>
          )}
          {replying && conversationId !== undefined && (
            <div class="replying">
              <span role="status">The agent is replying…</span>
              <button type="button" class="secondary small" disabled={cancel.busy} onClick={() => void cancel.run()}>
                Stop the reply
              </button>
            </div>
          )}
          <ErrorNotice error={cancel.error} context="Cancelling failed" />
          {limitReached ? (
            <div class="notice notice-warn" role="alert">
              <p>
                This conversation reached its message limit and takes no more messages.{" "}
                <Link href={pathOf("deployments", deploymentId, "chat")} class="button primary small">
                  Start a new conversation
                </Link>
              </p>
            </div>
          ) : (
            <form
              class="compose"
              aria-label="Send a message"
              onSubmit={(event) => {
                event.preventDefault()
                void send()
              }}
            >
              <label for="message">Message</label>
              <textarea
                id="message"
                rows={3}
                value={text}
                aria-describedby="message-help"
                onInput={(event) => setText(event.currentTarget.value)}
                onKeyDown={(event) => {
                  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
                    event.preventDefault()
                    void send()
                  }
                }}
              />
              <p id="message-help" class="help">
                Ctrl+Enter sends. Attach up to {maxAttachments} files; they upload as soon as they are chosen.
              </p>
              <FilePicker inputId="attach" label="Attach files" onFiles={uploads.add} disabled={sending} />
              <UploadList
                uploads={uploads.uploads}
                onRemove={(uploadId) => {
                  const upload = uploads.uploads.find((u) => u.id === uploadId)
                  if (upload?.file !== undefined) setAttached((current) => current.filter((f) => f.key !== upload.file!.key))
                  uploads.remove(uploadId)
                }}
              />
              <ErrorNotice error={sendError} context="The message was not sent" />
              <div class="actions">
                <button
                  type="submit"
                  class="primary"
                  disabled={sending || uploads.busy || (text.trim() === "" && attached.length === 0)}
                >
                  {sending ? "Sending…" : uploads.busy ? "Uploading…" : "Send"}
                </button>
              </div>
            </form>
          )}
        </section>
      </div>
    </>
  )
}
