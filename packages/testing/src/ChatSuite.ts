/**
 * Chat under concurrency, on a given storage: rounds of concurrent sends and
 * cancels to one new conversation, started in random interleavings. Whatever
 * the interleaving, every accepted turn's reply ends (none stays
 * `streaming`, the conversation is not left `assistant_streaming`), the
 * stored user turns are exactly the accepted ones, the message limit holds,
 * a cancel that answers "cancelled" leaves its reply so, and with no cancel
 * the reply of the last turn completes. Every storage
 * adapter runs it with one line: `ChatSuite.run("sqlite", layer)`.
 *
 * `HOSTING_CHAT_ROUNDS` sets the rounds (a long run); the seed is new on
 * every run and named in every failure, `HOSTING_CHAT_SEED` repeats a run.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Chat, Conversation, type Deployment, Ports, type Principal } from "@hosting/core"
import { Cause, Duration, Effect, Exit, FastCheck as fc, type Layer, Option, Runtime } from "effect"
import * as Seed from "./Seed.js"
import type { StoragePorts } from "./StorageSuite.js"
import * as TestServices from "./TestServices.js"

/** How an operation of a round waits before it starts: not at all, some fiber turns, or some milliseconds. */
type Start = { readonly _tag: "now" } | { readonly _tag: "yields"; readonly n: number } | { readonly _tag: "sleep"; readonly ms: number }

interface Send {
  readonly _tag: "send"
  readonly words: number
  readonly start: Start
}

interface Cancel {
  readonly _tag: "cancel"
  readonly start: Start
}

type Operation = Send | Cancel

const start: fc.Arbitrary<Start> = fc.oneof(
  { arbitrary: fc.constant({ _tag: "now" as const }), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 4 }).map((n) => ({ _tag: "yields" as const, n })), weight: 2 },
  { arbitrary: fc.integer({ min: 0, max: 150 }).map((ms) => ({ _tag: "sleep" as const, ms })), weight: 2 }
)

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { arbitrary: fc.record({ _tag: fc.constant("send" as const), words: fc.integer({ min: 1, max: 4 }), start }), weight: 6 },
  { arbitrary: fc.record({ _tag: fc.constant("cancel" as const), start }), weight: 1 }
)

/** A round: the operations on one new conversation, all started at once; at least one send. */
const round = fc.array(operation, { minLength: 1, maxLength: 50 }).filter((ops) => ops.some((op) => op._tag === "send"))

const waitFor = (s: Start): Effect.Effect<void> => {
  switch (s._tag) {
    case "now":
      return Effect.void
    case "yields":
      return Effect.repeatN(Effect.yieldNow(), s.n - 1)
    case "sleep":
      return Effect.sleep(Duration.millis(s.ms))
  }
}

/** The settings of the suite's chat: the limit and echo delay of the issue that found the race. */
const messageLimit = 4
const echoDelay = Duration.millis(40)
/** How long after its round a reply may take to end: a reply of 4 words takes about 200 ms. */
const endBound = Duration.seconds(5)

const numRuns = Math.max(1, Number(process.env["HOSTING_CHAT_ROUNDS"] ?? 12))
const seed = Number(process.env["HOSTING_CHAT_SEED"] ?? Math.floor(Math.random() * 2 ** 31))

/** The messages of a conversation once no reply of it is streaming, or as they are `bound` later (the chat suites' wait). */
export const settledWithin = (conversation: Conversation.ConversationId, bound: Duration.Duration) =>
  Effect.gen(function*() {
    const store = yield* Ports.ConversationStore
    const deadline = Date.now() + Duration.toMillis(bound)
    while (true) {
      const messages = yield* store.messages(conversation)
      if (Date.now() > deadline || messages.every((m) => m.status !== "streaming")) return messages
      yield* Effect.sleep("20 millis")
    }
  })

/** The messages of a conversation once no reply of it is streaming, or as they are `endBound` after the round. */
const settled = (conversation: Conversation.ConversationId) => settledWithin(conversation, endBound)

/** Runs one round and checks what it left. */
const check = (principal: Principal.Principal, deployment: Deployment.DeploymentId, ops: ReadonlyArray<Operation>) =>
  Effect.gen(function*() {
    const chat = yield* Chat.Chat
    const store = yield* Ports.ConversationStore
    const conversation = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
    const texts = ops.map((op, i) => op._tag === "send" ? Array.from({ length: op.words }, (_, w) => `r${i}w${w}`).join(" ") : "")
    const exits = yield* Effect.forEach(
      ops,
      (op, i) =>
        Effect.zipRight(
          waitFor(op.start),
          op._tag === "send"
            ? Effect.map(chat.send(principal, deployment, conversation, { content: texts[i]! }), (answer) => answer.message_id as string)
            : Effect.map(chat.cancel(principal, deployment, conversation), (answer) => answer.message_id ?? "")
        ).pipe(Effect.exit),
      { concurrency: "unbounded" }
    )
    const sends = ops.flatMap((op, i) => op._tag === "send" ? [{ text: texts[i]!, exit: exits[i]! }] : [])
    const accepted = sends.flatMap(({ exit, text }) => Exit.isSuccess(exit) ? [{ id: exit.value, text }] : [])
    // A send is accepted or refused for the limit; a cancel answers, or finds no conversation yet.
    for (const [i, exit] of exits.entries()) {
      if (Exit.isSuccess(exit)) continue
      const error = Cause.failureOption(exit.cause) as Option.Option<{ readonly _tag: string }>
      const expected = ops[i]!._tag === "send" ? "MessageLimitReached" : "ConversationNotFound"
      expect(Option.map(error, (e) => e._tag), Cause.pretty(exit.cause)).toEqual(Option.some(expected))
    }
    expect(accepted.length).toBe(Math.min(sends.length, messageLimit))

    const messages = yield* settled(conversation)
    const shown = JSON.stringify(messages.map((m) => [m.message_id, m.role, m.status, m.content]))
    expect(messages.filter((m) => m.status === "streaming"), `replies still streaming ${Duration.format(endBound)} after their round: ${shown}`)
      .toEqual([])
    // The stored turns are the accepted ones, each followed by its reply.
    const users = messages.filter((m) => m.role === "user")
    expect(users.map((m) => m.message_id).sort()).toEqual(accepted.map((a) => a.id).sort())
    expect(users.map((m) => m.content).sort()).toEqual(accepted.map((a) => a.text).sort())
    expect(messages.map((m) => m.role)).toEqual(users.flatMap(() => ["user", "assistant"]))
    for (const [i, user] of users.entries()) {
      const reply = messages[2 * i + 1]!
      // A reply keeps what arrived of the echo; a complete one is all of it.
      expect(user.content.startsWith(reply.content), reply.content).toBe(true)
      if (reply.status === "complete") expect(reply.content).toBe(user.content)
    }
    // A cancel that answered "cancelled" named a reply that ended so.
    const cancelled = exits.flatMap((exit, i) => ops[i]!._tag === "cancel" && Exit.isSuccess(exit) && exit.value !== "" ? [exit.value] : [])
    for (const id of cancelled) {
      expect(messages.find((m) => m.message_id === id)?.status, `the cancel answered for ${id}: ${shown}`).toBe("cancelled")
    }
    // With no cancel, the last turn's reply is never stopped by an earlier turn's start.
    if (ops.every((op) => op._tag === "send")) {
      expect([messages.at(-1)!.status, messages.at(-1)!.content]).toEqual(["complete", users.at(-1)!.content])
    }
    const stored = Option.getOrThrow(yield* store.find(conversation))
    expect([stored.user_messages, stored.terminal, stored.assistant_streaming]).toEqual([
      accepted.length,
      accepted.length >= messageLimit,
      false
    ])
  })

/** The suite's chat services on `storage`; `sharedStorage` as the servers on that storage run. */
export const run = <E>(name: string, storage: Layer.Layer<StoragePorts, E>, options: { readonly sharedStorage?: boolean } = {}) => {
  const services = TestServices.make({
    storageLayer: storage as Layer.Layer<StoragePorts>,
    messageLimit,
    echo: { delay: echoDelay },
    sharedStorage: options.sharedStorage ?? false
  })
  describe(`chat on ${name} storage under concurrent sends and cancels (HOSTING_CHAT_SEED=${seed})`, () => {
    withLayer(services, { excludeTestServices: true, timeout: "60 seconds" })((it) => {
      it.effect(
        `every accepted turn's reply ends within ${Duration.format(endBound)}; the stored turns are the accepted ones; the limit holds`,
        () =>
          Effect.gen(function*() {
            const team = yield* Seed.team
            const deployment = (yield* Seed.deployment(team)).id
            const runtime = yield* Effect.runtime<Chat.Chat | Ports.ConversationStore>()
            yield* Effect.promise(() =>
              fc.assert(
                fc.asyncProperty(round, (ops) => Runtime.runPromise(runtime)(check(team.principals.member, deployment, ops))),
                { numRuns, seed, endOnFailure: true }
              )
            ).pipe(Effect.tapDefect(() => Effect.logError(`HOSTING_CHAT_SEED=${seed} repeats this run`)))
          }),
        { timeout: 30_000 + numRuns * 10_000 }
      )
    })
  })
}
