/**
 * An agent that speaks A2A itself, deployed through the example server
 * (issue 29): its spec says `protocol: a2a` and names the agent's endpoint;
 * each turn reaches it with the conversation as the A2A context, the reply
 * is stored as it streams, and a cancel reaches the remote task. The agent
 * is the SDK-built echo agent of @hosting/testing, on loopback; the server
 * keeps its default runtime (echo) for every other agent.
 */
import * as A2aEchoAgent from "@hosting/testing/A2aEchoAgent"
import { Effect, Exit, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, type Running, serversWithFixtures } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-a2a-runtime-"))
const servers = serversWithFixtures(dir)

/** Polls `read` every 50 ms until `done` holds of its answer, for at most `ms`. */
const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, ms = 10_000): Promise<A> => {
  const deadline = Date.now() + ms
  let last = await read()
  while (!done(last) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    last = await read()
  }
  return last
}

describe("example server: an A2A agent as the runtime of its deployment (issue 29)", () => {
  let server: Running
  let agent: A2aEchoAgent.A2aEchoAgent
  const scope = Effect.runSync(Scope.make())

  beforeAll(async () => {
    agent = await Effect.runPromise(A2aEchoAgent.make({ delay: 15 }).pipe(Scope.extend(scope)))
    server = await servers.start({})
  })
  afterAll(async () => {
    await servers.stopAll()
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dir, { recursive: true, force: true })
  })

  it("a spec with protocol a2a and its endpoint: deployed, linked to its card, each turn sent with the conversation as context, the reply stored; cancel reaches the remote task", async () => {
    const registered = await call(server, "POST", "/agents/acme/relay/register", "alice-token", {
      build_id: "b-1",
      registry: "ghcr.io/acme",
      spec_content: `name: relay\ndescription: Relays to an A2A agent\nprotocol: a2a\nendpoint: ${agent.url}\n`
    })
    expect(registered.status).toBe(201)
    expect(registered.body.validation_warnings).toEqual([])
    const deployed = await call(server, "POST", "/agents/acme/relay/deployments", "alice-token", { build_id: "b-1" })
    expect(deployed.status).toBe(201)
    const deployment = deployed.body.id as string
    expect(deployed.body.links).toEqual({ a2a_card: `${server.baseUrl}/deployments/${deployment}/a2a/.well-known/agent-card.json` })

    const chat = (conversation: string) => `/deployments/${deployment}/messaging/conversations/${conversation}`
    const conversation = crypto.randomUUID()
    const history = () => call(server, "GET", `${chat(conversation)}/messages`, "bob-token")
    const replied = (status: string) => (h: { body: any }) => h.body.messages?.at(-1)?.role === "assistant" && h.body.messages.at(-1).status === status

    expect((await call(server, "POST", `${chat(conversation)}/messages`, "bob-token", { content: "hello over a2a" })).status).toBe(200)
    const first = await until(history, replied("complete"))
    expect(first.body.messages.map((m: any) => `${m.role}:${m.content}:${m.status}`)).toEqual([
      "user:hello over a2a:complete",
      "assistant:hello over a2a:complete"
    ])
    expect((await call(server, "POST", `${chat(conversation)}/messages`, "bob-token", { content: "second turn" })).status).toBe(200)
    await until(history, (h) => h.body.messages?.length === 4 && replied("complete")(h))
    // Both turns went to the agent in one A2A context: the conversation.
    expect(agent.received.map((r) => [r.contextId, r.text])).toEqual([[conversation, "hello over a2a"], [conversation, "second turn"]])

    // A long reply, cancelled once some of it is stored: the remote task is cancelled too.
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ")
    expect((await call(server, "POST", `${chat(conversation)}/messages`, "bob-token", { content: words })).status).toBe(200)
    await until(history, (h) => h.body.messages?.length === 6 && h.body.messages.at(-1).content.length > 0)
    const cancelled = await call(server, "POST", `${chat(conversation)}/cancel`, "bob-token")
    expect(cancelled.body.status).toBe("cancelled")
    const stopped = await until(history, replied("cancelled"))
    expect(stopped.body.messages.at(-1).content.length).toBeLessThan(words.length)
    const task = agent.received.at(-1)!.taskId
    await until(async () => agent.cancelled, (ids) => ids.includes(task), 5_000)
    expect(agent.cancelled).toContain(task)
  })

  it("a spec with a protocol the server does not speak: a warning at registration, and its replies fail in words", async () => {
    const registered = await call(server, "POST", "/agents/acme/odd/register", "alice-token", {
      build_id: "b-1",
      registry: "ghcr.io/acme",
      spec_content: "name: odd\ndescription: Speaks something else\nprotocol: smoke-signals\nendpoint: not a url\n"
    })
    expect(registered.status).toBe(201)
    expect(registered.body.validation_warnings.map((w: any) => `${w.code}:${w.path}`)).toEqual(["invalid_protocol:protocol", "invalid_endpoint:endpoint"])
    const deployed = await call(server, "POST", "/agents/acme/odd/deployments", "alice-token", { build_id: "b-1" })
    expect(deployed.status).toBe(201)
    const conversation = crypto.randomUUID()
    const path = `/deployments/${deployed.body.id}/messaging/conversations/${conversation}/messages`
    expect((await call(server, "POST", path, "alice-token", { content: "hello?" })).status).toBe(200)
    const history = await until(() => call(server, "GET", path, "alice-token"), (h) => h.body.messages?.at(-1)?.status === "failed")
    expect(history.body.messages.at(-1).status).toBe("failed")
  })
})
