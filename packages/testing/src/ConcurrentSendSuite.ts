/**
 * A second send while a reply streams (issue 28), on a given storage: each
 * strategy (`reject`, `queue`, `interrupt`), chosen by the deployment or by
 * the send, under real concurrency (a slow agent, so that the sends arrive
 * while a reply streams), with the message limit and idempotent sends
 * holding under each. Every storage adapter runs it with one line:
 * `ConcurrentSendSuite.run("sqlite", layer)`.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AgentRuntime, Chat, Conversation, type Deployment, Deployments, Ports } from "@hosting/core"
import { Cause, Duration, Effect, Exit, Layer, Option, Stream } from "effect"
import * as EchoAgent from "./EchoAgent.js"
import { settledWithin } from "./ChatSuite.js"
import * as Seed from "./Seed.js"
import type { StoragePorts } from "./StorageSuite.js"
import * as TestServices from "./TestServices.js"

/** The pause before each word of a reply: a reply of `words` words streams for about `words` times this. */
const wordDelay = Duration.millis(40)
const messageLimit = 6
/** How long a conversation may take to have no reply streaming. */
const endBound = Duration.seconds(10)

/** What the agent was asked and when, one entry per reply it ran. */
interface Run {
  readonly content: string
  /** The conversation before the turn, as the agent got it: `<role>:<status>:<content>` each. */
  readonly history: ReadonlyArray<string>
  readonly started: number
  ended: number | undefined
}

/** The echo agent, slowed, recording every reply it runs. */
const recordingAgent = () => {
  const runs: Array<Run> = []
  const echo = EchoAgent.make({ delay: wordDelay })
  const runtime = AgentRuntime.AgentRuntime.of({
    reply: (turn, emit) =>
      Effect.suspend(() => {
        const run: Run = {
          content: turn.message.content,
          history: turn.history.map((m) => `${m.role}:${m.status}:${m.content}`),
          started: Date.now(),
          ended: undefined
        }
        runs.push(run)
        return echo.reply(turn, emit).pipe(Effect.ensuring(Effect.sync(() => (run.ended = Date.now()))))
      })
  })
  return { runs, layer: Layer.succeed(AgentRuntime.AgentRuntime, runtime) }
}

const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}w${i}`).join(" ")

const newConversation = () => Conversation.ConversationId.make(globalThis.crypto.randomUUID())

/** The messages of a conversation once no reply of it streams (or as they are after `endBound`). */
const settled = (conversation: Conversation.ConversationId) => settledWithin(conversation, endBound)

const errorTag = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit) ? "ok" : Option.getOrElse(Option.map(Cause.failureOption(exit.cause), (e) => (e as { _tag: string })._tag), () => Cause.pretty(exit.cause))

const shown = (messages: ReadonlyArray<Conversation.Message>) => messages.map((m) => `${m.role}:${m.status}:${m.content}`)

/** The suite on `storage`; `sharedStorage` as the servers on that storage run. */
export const run = <E>(name: string, storage: Layer.Layer<StoragePorts, E>, options: { readonly sharedStorage?: boolean } = {}) => {
  const agent = recordingAgent()
  const services = TestServices.make({
    storageLayer: storage as Layer.Layer<StoragePorts>,
    messageLimit,
    agentLayer: agent.layer,
    sharedStorage: options.sharedStorage ?? false
  })

  /** A team, its deployment with the given strategy (none: the default), and the chat as its member. */
  const setup = (strategy?: Deployment.ConcurrentSend) =>
    Effect.gen(function*() {
      const team = yield* Seed.team
      const deployment = (yield* Seed.deployment(team)).id
      if (strategy !== undefined) {
        const deployments = yield* Deployments.Deployments
        yield* deployments.updateSettings(team.principals.owner, deployment, { concurrent_send: strategy })
      }
      const chat = yield* Chat.Chat
      const member = team.principals.member
      const send = (conversation: Conversation.ConversationId, content: string, extra: Omit<Chat.SendInput, "content"> = {}) =>
        chat.send(member, deployment, conversation, { content, ...extra })
      /**
       * Waits until the conversation's latest reply has streamed some text: a
       * send now arrives while it streams. A reply that ended first fails the
       * test (its reply was too short for this machine), rather than hang it.
       */
      const streaming = (conversation: Conversation.ConversationId) =>
        Effect.gen(function*() {
          const deadline = Date.now() + Duration.toMillis(endBound)
          while (Date.now() < deadline) {
            const last = (yield* chat.history(member, deployment, conversation)).at(-1)
            if (last?.role === "assistant" && last.status === "streaming" && last.content !== "") return
            if (last?.role === "assistant" && last.status !== "streaming") {
              return yield* Effect.dieMessage(`the reply ended (${last.status}) before a send could arrive while it streamed`)
            }
            yield* Effect.sleep("5 millis")
          }
          return yield* Effect.dieMessage("the reply never streamed")
        })
      return { team, deployment, chat, send, streaming }
    })

  describe(`a second send while a reply streams, on ${name} storage (issue 28)`, () => {
    withLayer(services, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
      it.effect("reject: a send while a reply streams answers ReplyInProgress and stores nothing; once the reply ended, a send is taken", () =>
        Effect.gen(function*() {
          const { send, streaming } = yield* setup("reject")
          const conversation = newConversation()
          yield* send(conversation, words("first", 30))
          yield* streaming(conversation)
          const refused = yield* Effect.exit(send(conversation, "second"))
          expect(errorTag(refused)).toBe("ReplyInProgress")
          const after = yield* settled(conversation)
          expect(shown(after)).toEqual(["user:complete:" + words("first", 30), "assistant:complete:" + words("first", 30)])
          yield* send(conversation, "third")
          expect(shown(yield* settled(conversation)).slice(2)).toEqual(["user:complete:third", "assistant:complete:third"])
        }))

      it.effect("reject under concurrency: of sends that arrive together at a new conversation exactly one is taken, the others answer ReplyInProgress", () =>
        Effect.gen(function*() {
          const { send } = yield* setup()
          const conversation = newConversation()
          const exits = yield* Effect.forEach(
            Array.from({ length: 8 }, (_, i) => i),
            (i) => Effect.exit(send(conversation, words(`s${i}`, 20), { concurrent_send: "reject" })),
            { concurrency: "unbounded" }
          )
          const tags = exits.map(errorTag)
          expect(tags.filter((t) => t === "ok").length, tags.join()).toBe(1)
          expect(tags.filter((t) => t === "ReplyInProgress").length, tags.join()).toBe(7)
          const messages = yield* settled(conversation)
          expect(messages.map((m) => [m.role, m.status])).toEqual([["user", "complete"], ["assistant", "complete"]])
          const stored = Option.getOrThrow(yield* (yield* Ports.ConversationStore).find(conversation))
          expect([stored.user_messages, stored.assistant_streaming]).toEqual([1, false])
        }))

      it.effect("queue: sends while a reply streams each wait; every reply completes, in order, each started after the one before ended, with it in its history", () =>
        Effect.gen(function*() {
          const { send, streaming } = yield* setup("queue")
          const conversation = newConversation()
          const texts = [words("q0", 20), words("q1", 3), words("q2", 3), words("q3", 3)]
          yield* send(conversation, texts[0]!)
          yield* streaming(conversation)
          // The three others arrive together while the first streams: they are stored in the order they arrived.
          yield* Effect.forEach(texts.slice(1), (text) => send(conversation, text), { concurrency: "unbounded", discard: true })
          const messages = yield* settled(conversation)
          expect(messages.filter((m) => m.role === "assistant").map((m) => m.status), shown(messages).join("\n"))
            .toEqual(["complete", "complete", "complete", "complete"])
          const users = messages.filter((m) => m.role === "user").map((m) => m.content)
          expect([...users].sort()).toEqual([...texts].sort())
          expect(users[0]).toBe(texts[0])
          // Each reply is the echo of its own turn, and follows it.
          for (let i = 0; i < messages.length; i += 2) expect(messages[i + 1]!.content).toBe(messages[i]!.content)
          // The agent ran them one at a time, in the conversation's order, each seeing the replies before it.
          const runs = agent.runs.filter((r) => users.includes(r.content))
          expect(runs.map((r) => r.content)).toEqual(users)
          for (let i = 1; i < runs.length; i++) {
            expect(runs[i]!.started).toBeGreaterThanOrEqual(runs[i - 1]!.ended!)
            expect(runs[i]!.history).toEqual(shown(messages.slice(0, 2 * i)))
          }
        }))

      it.effect("queue: a reply stream opened while a turn is queued gives the running reply whole, then the queued one", () =>
        Effect.gen(function*() {
          const { chat, deployment, send, streaming, team } = yield* setup("queue")
          const conversation = newConversation()
          const first = words("r0", 30)
          yield* send(conversation, first)
          yield* streaming(conversation)
          yield* send(conversation, "then me")
          const items = yield* Chat.stream(chat, team.principals.member, deployment, conversation, Option.none()).pipe(
            Stream.filter((item) => item._tag !== "Heartbeat"),
            Stream.takeUntil((item) => item._tag === "Completed" && item.content === "then me"),
            Stream.runCollect,
            Effect.timeout(endBound)
          )
          const texts = new Map<string, string>()
          const order: Array<string> = []
          for (const item of items) {
            if (!order.includes(item.message_id)) order.push(item.message_id)
            if (item._tag === "Delta") {
              const text = texts.get(item.message_id) ?? ""
              expect(item.index, `a delta of ${item.message_id} leaves no gap`).toBe(text.length)
              texts.set(item.message_id, text + item.delta)
            }
          }
          expect(order.map((id) => texts.get(id))).toEqual([first, "then me"])
          const ends = [...items].filter((item) => item._tag === "Completed").map((item) => item._tag === "Completed" && item.content)
          expect(ends).toEqual([first, "then me"])
        }))

      it.effect("queue: a queued send is overridden per send; an interrupting send stops the running reply and the queued ones", () =>
        Effect.gen(function*() {
          const { send, streaming } = yield* setup("reject")
          const conversation = newConversation()
          yield* send(conversation, words("a", 30))
          yield* streaming(conversation)
          yield* send(conversation, words("b", 3), { concurrent_send: "queue" })
          yield* send(conversation, words("c", 3), { concurrent_send: "interrupt" })
          const messages = yield* settled(conversation)
          expect(messages.map((m) => [m.role, m.status])).toEqual([
            ["user", "complete"],
            ["assistant", "cancelled"],
            ["user", "complete"],
            ["assistant", "cancelled"],
            ["user", "complete"],
            ["assistant", "complete"]
          ])
          expect(messages[5]!.content).toBe(words("c", 3))
        }))

      it.effect("interrupt (the default): a send while a reply streams stops it, stored as cancelled with what arrived, and its own reply completes", () =>
        Effect.gen(function*() {
          const { send, streaming } = yield* setup()
          const conversation = newConversation()
          const first = words("i0", 30)
          yield* send(conversation, first)
          yield* streaming(conversation)
          yield* send(conversation, "second")
          // The send answers once the stopped reply is stored.
          const now = yield* (yield* Ports.ConversationStore).messages(conversation)
          expect(now[1]!.status).toBe("cancelled")
          const messages = yield* settled(conversation)
          expect(messages.map((m) => [m.role, m.status])).toEqual([
            ["user", "complete"],
            ["assistant", "cancelled"],
            ["user", "complete"],
            ["assistant", "complete"]
          ])
          expect(first.startsWith(messages[1]!.content) && messages[1]!.content.length < first.length).toBe(true)
        }))

      for (const strategy of ["reject", "queue", "interrupt"] as const) {
        it.effect(`idempotent sends under ${strategy}: the same client_message_id sent again, even at once and while its reply streams, answers the first send and stores one turn`, () =>
          Effect.gen(function*() {
            const { send, streaming } = yield* setup(strategy)
            const conversation = newConversation()
            const answers = yield* Effect.forEach(
              [1, 2, 3],
              () => send(conversation, words("same", 30), { client_message_id: "client-1" }),
              { concurrency: "unbounded" }
            )
            expect(new Set(answers.map((a) => a.message_id)).size).toBe(1)
            yield* streaming(conversation)
            const again = yield* send(conversation, words("same", 30), { client_message_id: "client-1" })
            expect(again.message_id).toBe(answers[0]!.message_id)
            const messages = yield* settled(conversation)
            expect(messages.map((m) => [m.role, m.status])).toEqual([["user", "complete"], ["assistant", "complete"]])
          }))

        it.effect(`the message limit under ${strategy}: of sends that arrive together no more than the limit are stored; the rest answer MessageLimitReached${
          strategy === "reject" ? " (or ReplyInProgress)" : ""
        }`, () =>
          Effect.gen(function*() {
            const { send, streaming } = yield* setup(strategy)
            const conversation = newConversation()
            const exits = yield* Effect.forEach(
              Array.from({ length: 12 }, (_, i) => i),
              // Under reject the first reply must outlast the others' arrival; the others run one after another.
              (i) => Effect.exit(send(conversation, words(`m${i}`, strategy === "reject" ? 20 : 2))),
              { concurrency: "unbounded" }
            )
            const tags = exits.map(errorTag)
            const taken = tags.filter((t) => t === "ok").length
            const messages = yield* settled(conversation)
            expect(messages.filter((m) => m.role === "user").length).toBe(taken)
            expect(messages.every((m) => m.status !== "streaming")).toBe(true)
            if (strategy === "reject") {
              expect(taken).toBe(1)
              expect(tags.filter((t) => t !== "ok").every((t) => t === "ReplyInProgress"), tags.join()).toBe(true)
            } else {
              expect(taken).toBe(messageLimit)
              expect(tags.filter((t) => t !== "ok").every((t) => t === "MessageLimitReached"), tags.join()).toBe(true)
            }
            if (strategy === "queue") expect(messages.filter((m) => m.role === "assistant").every((m) => m.status === "complete")).toBe(true)
            // A terminal conversation answers the limit whatever the strategy, even while its last reply streams.
            const full = newConversation()
            for (let i = 0; i < messageLimit - 1; i++) {
              yield* send(full, `f${i}`)
              yield* settled(full)
            }
            yield* send(full, words("last", 30))
            yield* streaming(full)
            expect(errorTag(yield* Effect.exit(send(full, "over")))).toBe("MessageLimitReached")
            yield* settled(full)
          }))
      }
    })
  })
}
