/**
 * `AgentRuntime.byProtocol`: each turn goes to the runtime of the protocol
 * its deployment's spec names; the default protocol and no protocol go to
 * the fallback; a protocol no runtime speaks fails the reply in words.
 */
import { describe, expect, it } from "@effect/vitest"
import { AgentRuntime, Deployment } from "@hosting/core"
import { AgentRuntimeSuite, EchoAgent } from "@hosting/testing"
import { Effect, Option } from "effect"

/** A runtime that answers its own name, to tell which one took a turn. */
const named = (name: string): AgentRuntime.AgentRuntime["Type"] =>
  AgentRuntime.AgentRuntime.of({ reply: (_turn, emit) => Effect.sync(() => emit(name)) })

const withSpec = (spec: Record<string, unknown>): AgentRuntime.Turn => {
  const turn = AgentRuntimeSuite.turn("hello")
  return { ...turn, deployment: new Deployment.DeploymentRecord({ ...turn.deployment, spec }) }
}

const answer = (runtime: AgentRuntime.AgentRuntime["Type"], spec: Record<string, unknown>) =>
  Effect.gen(function*() {
    const chunks: Array<string> = []
    const ended = yield* Effect.either(runtime.reply(withSpec(spec), (chunk) => void chunks.push(chunk)))
    return { text: chunks.join(""), error: Option.map(Option.getLeft(ended), (e) => e.message) }
  })

describe("AgentRuntime.byProtocol", () => {
  const runtime = AgentRuntime.byProtocol(named("fallback"), { a2a: named("a2a") })

  it.effect("a spec naming a2a goes to the a2a runtime; none, or openai, to the fallback", () =>
    Effect.gen(function*() {
      expect(yield* answer(runtime, { protocol: "a2a" })).toEqual({ text: "a2a", error: Option.none() })
      expect(yield* answer(runtime, { protocol: " A2A" })).toEqual({ text: "a2a", error: Option.none() })
      expect(yield* answer(runtime, {})).toEqual({ text: "fallback", error: Option.none() })
      expect(yield* answer(runtime, { protocol: "openai" })).toEqual({ text: "fallback", error: Option.none() })
    }))

  it.effect("a protocol no runtime speaks fails the reply with a sentence naming it, and asks no runtime", () =>
    Effect.gen(function*() {
      expect(yield* answer(runtime, { protocol: "grpc" })).toEqual({
        text: "",
        error: Option.some(`The agent's spec names the protocol "grpc", which this server does not speak`)
      })
      // An inherited name is not a runtime.
      expect((yield* answer(runtime, { protocol: "constructor" })).error._tag).toBe("Some")
    }))

  it.effect("the fallback's replies are its own: the echo agent behind it still echoes", () =>
    Effect.gen(function*() {
      const echoing = AgentRuntime.byProtocol(EchoAgent.make(), {})
      expect((yield* answer(echoing, {})).text).toBe("hello")
    }))
})
