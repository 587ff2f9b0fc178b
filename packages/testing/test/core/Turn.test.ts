/**
 * The turn rules that every ConversationStore asks (`Turn.decide`): the
 * limit, whose conversation it is, a message sent again, a terminal
 * conversation, and a send that rejects concurrent sends while a reply
 * streams.
 */
import { describe, expect, it } from "@effect/vitest"
import { Conversation, Deployment, Ids, type Ports, Turn } from "@hosting/core"
import { DateTime, Option } from "effect"

const at = DateTime.unsafeMake(0)

const message = (id: string, role: "user" | "assistant") =>
  new Conversation.Message({ message_id: Conversation.MessageId.make(id), role, content: "", attachments: [], timestamp: at, status: "complete" })

/** A turn of user-1 on dep-1, with a limit of three user messages unless told. */
const turn = (overrides: Partial<Ports.TurnInput> = {}): Ports.TurnInput => ({
  conversation_id: Conversation.ConversationId.make("9b2f5c1e-4a7d-4c3b-9e8f-0a1b2c3d4e5f"),
  deployment_id: Deployment.DeploymentId.make("dep-1"),
  owner_id: Ids.UserId.make("user-1"),
  title: "hello",
  message: message("msg-user", "user"),
  client_message_id: Option.none(),
  reply: message("msg-reply", "assistant"),
  lease: { owner: "process-1", expires_at: at },
  message_limit: 3,
  ...overrides
})

/** An existing conversation of user-1 on dep-1 holding `count` user messages. */
const stored = (count: number, overrides: Partial<Turn.Stored> = {}): Option.Option<Turn.Stored> =>
  Option.some({ owner_id: "user-1", deployment_id: "dep-1", user_messages: count, terminal: false, earlier: Option.none(), streaming: false,
    ...overrides })

describe("Turn.decide", () => {
  it("a first message creates the conversation with one user message", () => {
    expect(Turn.decide(turn(), Option.none())).toEqual({ _tag: "Accept", before: 0, user_messages: 1, terminal: false })
  })

  it("limit: a limit below one refuses even a first message; a limit of one makes the first message terminal", () => {
    expect(Turn.decide(turn({ message_limit: 0 }), Option.none())).toEqual({ _tag: "LimitReached" })
    expect(Turn.decide(turn({ message_limit: 1 }), Option.none())).toEqual({ _tag: "Accept", before: 0, user_messages: 1, terminal: true })
  })

  it("limit: below the limit the turn is taken, the message that reaches it makes the conversation terminal, at it the turn is refused", () => {
    expect(Turn.decide(turn(), stored(1))).toEqual({ _tag: "Accept", before: 1, user_messages: 2, terminal: false })
    expect(Turn.decide(turn(), stored(2))).toEqual({ _tag: "Accept", before: 2, user_messages: 3, terminal: true })
    expect(Turn.decide(turn(), stored(3))).toEqual({ _tag: "LimitReached" })
  })

  it("terminal: a terminal conversation takes no more turns, even under a larger limit", () => {
    expect(Turn.decide(turn({ message_limit: 10 }), stored(3, { terminal: true }))).toEqual({ _tag: "LimitReached" })
  })

  it("ownership: a conversation of another user, or on another deployment, refuses the turn", () => {
    expect(Turn.decide(turn(), stored(1, { owner_id: "user-2" }))).toEqual({ _tag: "NotOwner" })
    expect(Turn.decide(turn(), stored(1, { deployment_id: "dep-2" }))).toEqual({ _tag: "NotOwner" })
  })

  it("ownership comes before everything else: another user's conversation refuses a repeated or a limited turn alike", () => {
    const earlier = Option.some(message("msg-earlier", "user"))
    expect(Turn.decide(turn(), stored(3, { owner_id: "user-2", earlier, terminal: true }))).toEqual({ _tag: "NotOwner" })
  })

  it("idempotency: a message sent again answers with the stored one, even when the conversation is terminal", () => {
    const earlier = message("msg-earlier", "user")
    const again = turn({ client_message_id: Option.some("client-1") })
    expect(Turn.decide(again, stored(1, { earlier: Option.some(earlier) }))).toEqual({ _tag: "Repeated", message: earlier })
    expect(Turn.decide(again, stored(3, { earlier: Option.some(earlier), terminal: true }))).toEqual({ _tag: "Repeated", message: earlier })
  })

  it("reject (issue 28): a turn that rejects concurrent sends is refused while a reply streams, taken once none does", () => {
    const rejecting = turn({ reject_if_streaming: true })
    expect(Turn.decide(rejecting, stored(1, { streaming: true }))).toEqual({ _tag: "ReplyInProgress" })
    expect(Turn.decide(rejecting, stored(1))).toEqual({ _tag: "Accept", before: 1, user_messages: 2, terminal: false })
    // The other strategies are not refused by the store: the reply runner handles what streams.
    expect(Turn.decide(turn(), stored(1, { streaming: true }))._tag).toBe("Accept")
  })

  it("reject (issue 28) comes after idempotency and the limit: a repeat answers, a terminal conversation says so", () => {
    const earlier = message("msg-earlier", "user")
    const again = turn({ reject_if_streaming: true, client_message_id: Option.some("client-1") })
    expect(Turn.decide(again, stored(1, { earlier: Option.some(earlier), streaming: true }))).toEqual({ _tag: "Repeated", message: earlier })
    expect(Turn.decide(turn({ reject_if_streaming: true }), stored(3, { streaming: true }))).toEqual({ _tag: "LimitReached" })
  })

  it("started: the store's answer counts the user messages before the turn", () => {
    const accepted = Turn.decide(turn(), stored(2))
    expect(accepted._tag === "Accept" && Turn.started(accepted)).toEqual({ _tag: "Started", user_messages: 2 })
  })
})
