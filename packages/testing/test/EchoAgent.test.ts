/**
 * The echo agent passes the agent runtime contract; beyond it, its reply
 * read from the port's callback and through the stream view splits the
 * words alike and pauses alike.
 */
import { describe, expect, it } from "@effect/vitest"
import { AgentRuntime } from "@hosting/core"
import { AgentRuntimeSuite, EchoAgent } from "@hosting/testing"
import { Effect, Either, Stream } from "effect"

AgentRuntimeSuite.run("echo agent", EchoAgent.layer({ delay: "2 millis", failOn: AgentRuntimeSuite.failWord }))

const turn = AgentRuntimeSuite.turn

/**
 * One reply read both ways: straight from the port's `reply` (what chat
 * does) and through its stream view, `AgentRuntime.replyStream`.
 */
const bothForms = (runtime: AgentRuntime.AgentRuntime["Type"], content: string) =>
  Effect.gen(function*() {
    const streamed: Array<string> = []
    const streamEnd = yield* Effect.either(
      Stream.runForEach(AgentRuntime.replyStream(runtime, turn(content)), (c) => Effect.sync(() => streamed.push(c)))
    )
    const emitted: Array<string> = []
    const eachEnd = yield* Effect.either(runtime.reply(turn(content), (c) => void emitted.push(c)))
    return { streamed, emitted, streamEnd, eachEnd }
  })

describe("EchoAgent", () => {
  it.effect("both forms echo the words in order, with their spaces", () =>
    Effect.gen(function*() {
      const r = yield* bothForms(EchoAgent.make(), "one  two three ")
      expect(r.streamed).toEqual(["one  ", "two ", "three "])
      expect(r.emitted).toEqual(r.streamed)
      expect([Either.isRight(r.streamEnd), Either.isRight(r.eachEnd)]).toEqual([true, true])
    }))

  it.live("both forms pause before each chunk", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const r = yield* bothForms(EchoAgent.make({ delay: "20 millis" }), "a b c")
      expect(r.emitted).toEqual(["a ", "b ", "c"])
      expect(r.emitted).toEqual(r.streamed)
      // Three pauses for each form.
      expect(Date.now() - started).toBeGreaterThanOrEqual(120)
    }))
})
