/**
 * The contract of the AgentRuntime port; every runtime runs it with one line.
 *
 * The suite talks to an agent through the runtime under test, so it needs an
 * agent whose answers it can predict: one that echoes the user's message back
 * in chunks (`EchoAgent.chunksOf` splits it), pausing a few milliseconds
 * before each chunk, and that breaks off at the chunk holding `failWord`
 * after sending the chunks before it. The echo agent is such an agent
 * (`EchoAgent.layer({ delay: "2 millis", failOn: AgentRuntimeSuite.failWord })`);
 * a runtime that calls a remote agent points at a fake one scripted so.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AgentRuntime, Conversation, Deployment, Ids } from "@hosting/core"
import { DateTime, Deferred, Effect, Fiber, type Layer, Option, Stream } from "effect"
import { uniqueName } from "./StorageSuite.js"

/** The word at which the suite's agent breaks off its reply. */
export const failWord = "breakdown"

const at = DateTime.unsafeMake("2026-11-01T10:00:00.000Z")

/** A turn carrying `content` as the user's new message, with ids of its own (for tests of a runtime beyond the suite, too). */
export const turn = (content: string): AgentRuntime.Turn => {
  const account = Ids.AccountId.make(uniqueName("acc"))
  return {
    deployment: new Deployment.DeploymentRecord({
      id: Deployment.DeploymentId.make(uniqueName("dep")),
      account_id: account,
      account: Ids.AccountName.make("suite"),
      publisher_id: account,
      publisher: Ids.AccountName.make("suite"),
      agent_name: Ids.AgentName.make("echo"),
      build_id: Ids.BuildId.make("b-1"),
      namespace: "suite-echo",
      status: "running",
      deployed_at: at,
      undeployed_at: Option.none(),
      spec: {}
    }),
    conversation: Conversation.ConversationId.make(globalThis.crypto.randomUUID()),
    history: [],
    message: new Conversation.Message({
      message_id: Conversation.MessageId.make(uniqueName("msg")),
      role: "user",
      content,
      attachments: [],
      timestamp: at,
      status: "complete"
    })
  }
}

type Runtime = AgentRuntime.AgentRuntime["Type"]

/** The chunks a reply gave and how it ended, through the port's `reply` or through its stream view. */
interface Outcome {
  readonly chunks: ReadonlyArray<string>
  readonly error: Option.Option<AgentRuntime.AgentError>
}

const viaStream = (runtime: Runtime, content: string): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const chunks: Array<string> = []
    const ended = yield* Effect.either(
      Stream.runForEach(AgentRuntime.replyStream(runtime, turn(content)), (c) => Effect.sync(() => chunks.push(c)))
    )
    return { chunks, error: Option.getLeft(ended) }
  })

const viaCallback = (runtime: Runtime, content: string): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const chunks: Array<string> = []
    const ended = yield* Effect.either(runtime.reply(turn(content), (c) => void chunks.push(c)))
    return { chunks, error: Option.getLeft(ended) }
  })

/** The ways to read a reply: the port's one method, and the stream view derived from it. */
const forms = [["reply", viaCallback] as const, ["replyStream", viaStream] as const]

/**
 * Starts a reply in a fiber of its own; `first` completes with its first
 * chunk, and `chunks` holds every chunk so far.
 */
const started = (runtime: Runtime, form: "reply" | "replyStream", content: string) =>
  Effect.gen(function*() {
    const first = yield* Deferred.make<string>()
    const chunks: Array<string> = []
    const heard = (chunk: string) => {
      chunks.push(chunk)
      Deferred.unsafeDone(first, Effect.succeed(chunk))
    }
    const fiber = yield* (form === "replyStream"
      ? Stream.runForEach(AgentRuntime.replyStream(runtime, turn(content)), (chunk) => Effect.sync(() => heard(chunk)))
      : runtime.reply(turn(content), heard)).pipe(Effect.fork)
    return { first, chunks, fiber }
  })

/** Words enough that the agent is still answering long after its first chunk. */
const longText = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ")

/** Runs the agent runtime contract against a layer providing the port (see the module comment for its agent). */
export const run = <E>(name: string, layer: Layer.Layer<AgentRuntime.AgentRuntime, E>) => {
  describe(`agent runtime contract: ${name}`, () => {
    withLayer(layer, { timeout: 30_000, excludeTestServices: true })((it) => {
      it.effect("a reply gives the agent's answer chunk by chunk, in order, and ends when the answer does (each form)", () =>
        Effect.gen(function*() {
          const runtime = yield* AgentRuntime.AgentRuntime
          const content = "Hello there, how are   you today?"
          for (const [form, replyOf] of forms) {
            const { chunks, error } = yield* replyOf(runtime, content)
            expect({ form, joined: chunks.join(""), failed: Option.isSome(error) }).toEqual({ form, joined: content, failed: false })
            expect(chunks.length).toBeGreaterThan(1)
          }
        }))

      it.effect("the stream view gives the same chunks as reply hands emit, in the same order", () =>
        Effect.gen(function*() {
          const runtime = yield* AgentRuntime.AgentRuntime
          const content = "one two  three four five"
          const streamed = yield* viaStream(runtime, content)
          const emitted = yield* viaCallback(runtime, content)
          expect(emitted.chunks).toEqual(streamed.chunks)
        }))

      it.effect(`an agent that breaks off fails the reply with AgentError, after the chunks it sent before (each form)`, () =>
        Effect.gen(function*() {
          const runtime = yield* AgentRuntime.AgentRuntime
          for (const [form, replyOf] of forms) {
            const { chunks, error } = yield* replyOf(runtime, `first second ${failWord} never`)
            expect({ form, joined: chunks.join("") }).toEqual({ form, joined: "first second " })
            const failure = Option.getOrThrow(error)
            expect(failure).toBeInstanceOf(AgentRuntime.AgentError)
            // The message is shown to the user: it says something, in words.
            expect(failure.message.trim()).not.toBe("")
          }
        }))

      it.effect("interrupting a reply stops it: no chunk comes after the interrupt (each form)", () =>
        Effect.gen(function*() {
          const runtime = yield* AgentRuntime.AgentRuntime
          for (const [form] of forms) {
            const reply = yield* started(runtime, form, longText)
            yield* Deferred.await(reply.first).pipe(Effect.timeout("10 seconds"))
            yield* Fiber.interrupt(reply.fiber).pipe(Effect.timeout("10 seconds"))
            const atInterrupt = reply.chunks.length
            yield* Effect.sleep("100 millis")
            expect({ form, chunks: reply.chunks.length }).toEqual({ form, chunks: atInterrupt })
            // It was stopped, not finished: the agent had more to say.
            expect(reply.chunks.join("").length).toBeLessThan(longText.length)
          }
        }))

      it.effect("replies running at once each give their own turn's answer, unmixed", () =>
        Effect.gen(function*() {
          const runtime = yield* AgentRuntime.AgentRuntime
          const contents = ["alpha beta gamma delta", "uno dos tres cuatro cinco", "eins zwei drei"]
          // Both ways at once.
          const outcomes = yield* Effect.forEach(
            contents,
            (content, i) => (i % 2 === 0 ? viaStream : viaCallback)(runtime, content),
            { concurrency: "unbounded" }
          )
          expect(outcomes.map((o) => o.chunks.join(""))).toEqual(contents)
        }))

      it.effect("a reply is asked anew each time it runs: running it twice gives the answer twice", () =>
        Effect.gen(function*() {
          const runtime = yield* AgentRuntime.AgentRuntime
          const once = turn("again and again")
          const heard: Array<string> = []
          const reply = runtime.reply(once, (chunk) => void heard.push(chunk))
          yield* reply
          yield* reply
          expect(heard.join("")).toBe("again and againagain and again")
          const stream = AgentRuntime.replyStream(runtime, once)
          expect([yield* Stream.mkString(stream), yield* Stream.mkString(stream)]).toEqual(["again and again", "again and again"])
        }))
    })
  })
}
