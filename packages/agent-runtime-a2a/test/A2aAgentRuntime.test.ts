import { describe, expect, it } from "@effect/vitest"
import { A2aAgentRuntime } from "@hosting/agent-runtime-a2a"
import { AgentRuntime, Deployment } from "@hosting/core"
import { AgentRuntimeSuite } from "@hosting/testing"
import * as A2aEchoAgent from "@hosting/testing/A2aEchoAgent"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

/** The runtime pointed at a fresh A2A echo agent (built with the SDK's server) for the layer's life. */
const behindEcho = (options: A2aEchoAgent.A2aEchoAgentOptions, by: "base" | "card") =>
  Layer.unwrapScoped(Effect.map(
    A2aEchoAgent.make({ delay: 2, failOn: AgentRuntimeSuite.failWord, ...options }),
    (agent) => A2aAgentRuntime.layer({ cardUrlFor: () => (by === "base" ? agent.url : agent.cardUrl) })
  ))

AgentRuntimeSuite.run("a2a (base URL, streaming)", behindEcho({}, "base"))
AgentRuntimeSuite.run("a2a (card URL)", behindEcho({}, "card"))

/** A turn of the suite whose deployment's spec names `endpoint`. */
const turnFor = (content: string, spec: Record<string, unknown>): AgentRuntime.Turn => {
  const turn = AgentRuntimeSuite.turn(content)
  return { ...turn, deployment: new Deployment.DeploymentRecord({ ...turn.deployment, spec }) }
}

const run = (runtime: AgentRuntime.AgentRuntime["Type"], turn: AgentRuntime.Turn) =>
  Effect.gen(function*() {
    const chunks: Array<string> = []
    const ended = yield* Effect.either(runtime.reply(turn, (chunk) => void chunks.push(chunk)))
    return { text: chunks.join(""), chunks, error: Option.getLeft(ended) }
  })

describe("A2aAgentRuntime", () => {
  it("the card URL of an endpoint: a .json URL is the card, any other URL a base with the card under it; else none", () => {
    expect(A2aAgentRuntime.cardUrlOf("https://agent.example")).toEqual(Option.some("https://agent.example/.well-known/agent-card.json"))
    expect(A2aAgentRuntime.cardUrlOf("http://h:9000/agents/x/")).toEqual(Option.some("http://h:9000/agents/x/.well-known/agent-card.json"))
    expect(A2aAgentRuntime.cardUrlOf(" http://h/card.json ")).toEqual(Option.some("http://h/card.json"))
    expect(A2aAgentRuntime.cardUrlOf("ftp://h/x")).toEqual(Option.none())
    expect(A2aAgentRuntime.cardUrlOf("not a url")).toEqual(Option.none())
  })

  it("without an endpoint, the card is under the agent's Service in its namespace", () => {
    const turn = turnFor("x", { port: 9100 })
    expect(A2aAgentRuntime.defaultCardUrl(turn.deployment)).toBe("http://echo.suite-echo.svc.cluster.local:9100")
  })

  it.scoped("each turn is sent with the conversation's id as its context, through the spec's endpoint; headers go along", () =>
    Effect.gen(function*() {
      const agent = yield* A2aEchoAgent.make({ delay: 1 })
      const runtime = A2aAgentRuntime.make({ headers: { "x-api-key": "k-1" } })
      const first = turnFor("hello there", { protocol: "a2a", endpoint: agent.url })
      const second = { ...turnFor("and again", { protocol: "a2a", endpoint: agent.cardUrl }), conversation: first.conversation }
      expect((yield* run(runtime, first)).text).toBe("hello there")
      expect((yield* run(runtime, second)).text).toBe("and again")
      expect(agent.received.map((r) => [r.contextId, r.text])).toEqual([[first.conversation, "hello there"], [first.conversation, "and again"]])
      expect(agent.received[0]!.headers["x-api-key"]).toBe("k-1")
      // Two turns, two tasks of the one context.
      expect(new Set(agent.received.map((r) => r.taskId)).size).toBe(2)
    }))

  it.scoped("a failed remote task fails the reply with the agent's words, after the chunks before it", () =>
    Effect.gen(function*() {
      const agent = yield* A2aEchoAgent.make({ delay: 1, failOn: "boom" })
      const outcome = yield* run(A2aAgentRuntime.make(), turnFor("one two boom three", { endpoint: agent.url }))
      expect(outcome.text).toBe("one two ")
      expect(Option.getOrThrow(outcome.error).message).toBe("The agent's task failed: The echo agent broke down.")
    }))

  it.scoped("interrupting a reply sends CancelTask: the remote task is cancelled and stops", () =>
    Effect.gen(function*() {
      const agent = yield* A2aEchoAgent.make({ delay: 20 })
      const runtime = A2aAgentRuntime.make()
      const first = yield* Deferred.make<void>()
      const turn = turnFor(Array.from({ length: 200 }, (_, i) => `w${i}`).join(" "), { endpoint: agent.url })
      const fiber = yield* Effect.fork(runtime.reply(turn, () => Deferred.unsafeDone(first, Effect.void)))
      yield* Deferred.await(first).pipe(Effect.timeout("5 seconds"))
      yield* Fiber.interrupt(fiber).pipe(Effect.timeout("10 seconds"))
      expect(agent.cancelled).toEqual([agent.received[0]!.taskId])
    }))

  it.scoped("an agent that is not there, or whose card is not a card, fails the reply in words", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const server = createServer().listen(0, "127.0.0.1", () => {
            const port = (server.address() as AddressInfo).port
            server.close(() => resolve(port))
          })
        })
      )
      const runtime = A2aAgentRuntime.make({ connectTimeout: "5 seconds" })
      const absent = yield* run(runtime, turnFor("hi", { endpoint: `http://127.0.0.1:${closed}` }))
      expect(Option.getOrThrow(absent.error).message).toBe("The agent is not reachable")
      const bad = yield* run(runtime, turnFor("hi", { endpoint: "not a url" }))
      expect(Option.getOrThrow(bad.error).message).toBe("The agent's endpoint is not a valid http(s) URL")
    }))

  it.scoped("a card that says the agent does not stream: the reply is the completed task's answer", () =>
    Effect.gen(function*() {
      const agent = yield* A2aEchoAgent.make({ delay: 1, streaming: false })
      const outcome = yield* run(A2aAgentRuntime.make(), turnFor("no stream here", { endpoint: agent.url }))
      expect({ text: outcome.text, failed: Option.isSome(outcome.error) }).toEqual({ text: "no stream here", failed: false })
    }))
})
