/**
 * Generator functions made once (docs/decisions.md): the chat flow's
 * requests (a send to a new conversation, then its reply stream read to
 * `message.completed`) and a member's reads make no generator function of
 * their own. A
 * generator function called for the first time gets a map and a prototype
 * of its own in the old generation, which keep its closure (the request)
 * until a full collection. Each generator function's generators share its
 * prototype, so the test counts the prototypes of the generators that run
 * while flows are served, through the server and the client in this process.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { SqliteStorage } from "@hosting/storage-sqlite"
import { Seed } from "@hosting/testing"
import { Effect, Layer } from "effect"
import { conversationPath, deployedAgent, newConversationId } from "./ChatHelpers.js"
import { layer, port } from "./HttpTestServer.js"
import { open } from "./sse.js"

/** The prototype every generator object inherits `next` from. */
const generatorPrototype: { next: (value?: unknown) => IteratorResult<unknown> } = Object.getPrototypeOf(function*() {}).prototype

/** Notes the prototype of every generator that steps until the scope closes. */
const generatorsSeen = Effect.acquireRelease(
  Effect.sync(() => {
    const next = generatorPrototype.next
    const seen = new Set<object>()
    generatorPrototype.next = function(this: object, value?: unknown) {
      seen.add(Object.getPrototypeOf(this))
      return next.call(this, value)
    }
    return { seen, next }
  }),
  ({ next }) => Effect.sync(() => void (generatorPrototype.next = next))
)

/** One flow message over plain fetch (no helper that makes generators of its own). */
const flow = (base: string, token: string, deployment: string) => flowIn(base, token, deployment, newConversationId())

/** A flow message in the given conversation; resolves with the reply's text. */
const flowIn = async (base: string, token: string, deployment: string, conversation: string) => {
  const sent = await fetch(`${base}${conversationPath(deployment, conversation)}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ content: "hello there" })
  })
  expect(sent.status).toBe(200)
  await sent.arrayBuffer()
  const stream = await open(`${base}${conversationPath(deployment, conversation)}/stream`, { authorization: `Bearer ${token}` })
  try {
    for (let events = 0; events < 20; events++) {
      const [event] = await stream.next(1)
      if (event?.event === "message.completed") return event.data.content as string
    }
    throw new Error("no message.completed in 20 events")
  } finally {
    stream.close()
  }
}

const storages = [
  ["in memory", undefined],
  ["on SQLite", Layer.orDie(SqliteStorage.layer({ filename: ":memory:" }))]
] as const

describe.each(storages)("HTTP: generator functions made once, storage %s", (_, storage) => {
  withLayer(layer({ echo: { delay: 0 }, ...(storage === undefined ? {} : { storageLayer: storage }) }), { excludeTestServices: true })((it) => {
    it.scoped("a flow message (send, then its reply stream to the end) makes no generator function of its own", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const base = `http://127.0.0.1:${yield* port}/api/v1`
        const run = (count: number) =>
          Effect.promise(async () => {
            for (let i = 0; i < count; i++) expect(await flow(base, team.tokens.member, deployment)).toBe("hello there")
          })
        // The first messages make what is made once (services' functions, statements, timers).
        yield* run(5)
        const { seen } = yield* generatorsSeen
        yield* run(10)
        const afterTen = seen.size
        yield* run(30)
        // A generator function made per request adds one prototype a message, 30 at least; work done per flush adds a few at most.
        expect(seen.size - afterTen).toBeLessThan(10)
        expect(afterTen).toBeGreaterThan(0)
      }))

    it.scoped("a member's reads (history, conversations, the agent, /me, deployment history) make no generator function of their own", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const base = `http://127.0.0.1:${yield* port}/api/v1`
        const conversations = yield* Effect.promise(async () => {
          const made: Array<string> = []
          for (let i = 0; i < 3; i++) {
            made.push(newConversationId())
            await flowIn(base, team.tokens.member, deployment, made[i]!)
          }
          return made
        })
        const paths = [
          ...conversations.map((id) => `${conversationPath(deployment, id)}/messages`),
          `/deployments/${deployment}/chat/conversations`,
          `/agents/${team.account}/helper`,
          "/me",
          `/agents/${team.account}/helper/deployment/history`
        ]
        const read = (rounds: number) =>
          Effect.promise(async () => {
            for (let round = 0; round < rounds; round++) {
              for (const path of paths) {
                const answer = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${team.tokens.member}` } })
                expect(answer.status).toBe(200)
                await answer.arrayBuffer()
              }
            }
          })
        yield* read(3)
        const { seen } = yield* generatorsSeen
        yield* read(5)
        const afterFive = seen.size
        yield* read(20)
        // A generator function made per request adds one prototype a read, 140 at least.
        expect(seen.size - afterFive).toBeLessThan(10)
      }))
  })
})
