/**
 * At most N event and reply streams per user, over all their tokens and
 * sessions: one more is 429 `too_many_streams` with `Retry-After`; a stream
 * that ends gives its slot back, and open/close cycles leave nothing held.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { StreamLimits } from "@hosting/http"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { deployedAgent, newConversationId, replies, send, settledHistory } from "./ChatHelpers.js"
import { expectErrorBody, layer, port, raw } from "./HttpTestServer.js"
import { open, type RawStream } from "./sse.js"

const max = 2

const events = (team: Seed.Team, token: string) =>
  Effect.flatMap(port, (p) =>
    Effect.promise(() => open(`http://127.0.0.1:${p}/api/v1/accounts/${team.account}/events`, { authorization: `Bearer ${token}` })))

const closeAll = (streams: ReadonlyArray<RawStream>) => Effect.sync(() => streams.forEach((s) => s.close()))

/** Polls until `check` holds, failing after two seconds. */
const eventually = <R>(what: string, check: Effect.Effect<boolean, never, R>) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 2_000
    while (!(yield* check)) {
      if (Date.now() > deadline) return yield* Effect.dieMessage(`still not so after 2 s: ${what}`)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
  })

describe("HTTP: open streams per user", () => {
  withLayer(layer({ maxStreamsPerUser: max, echo: { delay: 0 } }), { excludeTestServices: true })((it) => {
    it.effect("a token holds at most N streams, events and replies together; the next is 429 too_many_streams with Retry-After", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        expect((yield* send(team.tokens.owner, deployment, conversation, { content: "hi" })).status).toBe(200)
        yield* settledHistory(team.tokens.owner, deployment, conversation)

        const first = yield* events(team, team.tokens.owner)
        const second = yield* replies(team.tokens.owner, deployment, conversation)
        expect([first.status, second.status]).toEqual([200, 200])
        const third = yield* events(team, team.tokens.owner)
        expect(third.status).toBe(429)
        expectErrorBody(third.body, "too_many_streams")
        expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0)
        const thirdReply = yield* replies(team.tokens.owner, deployment, conversation)
        expect(thirdReply.status).toBe(429)

        // Another credential of another person has slots of its own.
        const admin = yield* events(team, team.tokens.admin)
        expect(admin.status).toBe(200)

        // Closing a stream gives its slot back.
        first.close()
        const limits = yield* StreamLimits.StreamLimits
        yield* eventually("the closed stream's slot is back", Effect.gen(function*() {
          const again = yield* events(team, team.tokens.owner)
          if (again.status === 200) {
            again.close()
            return true
          }
          return false
        }))
        yield* closeAll([second, admin])
        yield* eventually("every slot is back", Effect.sync(() => limits.keys() === 0))
      }))

    it.effect("a user's sessions share the limit: signing in again gives no more streams", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const url = `http://127.0.0.1:${yield* port}/api/v1/accounts/${team.account}/events`
        const sessions = yield* Effect.forEach(Array.from({ length: max + 1 }), () =>
          Effect.map(raw("POST", "/session", { json: { token: team.tokens.member } }), (r) => (r.headers["set-cookie"] ?? "").split(";")[0]!))
        const opened = yield* Effect.forEach(sessions, (cookie) => Effect.promise(() => open(url, { cookie })))
        expect(opened.map((s) => s.status)).toEqual([...Array(max).fill(200), 429])
        expectErrorBody(opened[max]!.body, "too_many_streams")
        // The token the sessions came from is the same person too.
        const token = yield* events(team, team.tokens.member)
        expect(token.status).toBe(429)
        yield* closeAll(opened)
        const limits = yield* StreamLimits.StreamLimits
        yield* eventually("every slot is back", Effect.sync(() => limits.keys() === 0))
      }))

    it.effect("a stream refused for another reason (403) holds no slot", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        for (let i = 0; i < max + 2; i++) {
          const refused = yield* events(team, team.tokens.outsider)
          expect(refused.status).toBe(403)
        }
        const limits = yield* StreamLimits.StreamLimits
        yield* eventually("nothing is held", Effect.sync(() => limits.keys() === 0))
        const member = yield* Effect.forEach(Array.from({ length: max }), () => events(team, team.tokens.member))
        expect(member.map((s) => s.status)).toEqual(Array(max).fill(200))
        yield* closeAll(member)
      }))

    it.effect("50 cycles of opening and closing two streams leak no slot: afterwards the token opens N streams again and nothing is held", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const limits = yield* StreamLimits.StreamLimits
        for (let cycle = 0; cycle < 50; cycle++) {
          const opened = yield* Effect.all([events(team, team.tokens.member), events(team, team.tokens.member)], { concurrency: 2 })
          expect(opened.map((s) => s.status)).toEqual([200, 200])
          yield* Effect.promise(() => opened[0].next(1))
          yield* closeAll(opened)
          yield* eventually("the cycle's slots are back", Effect.sync(() => limits.keys() === 0))
        }
        const last = yield* Effect.forEach(Array.from({ length: max }), () => events(team, team.tokens.member))
        expect(last.map((s) => s.status)).toEqual(Array(max).fill(200))
        yield* closeAll(last)
        yield* eventually("nothing is held", Effect.sync(() => limits.keys() === 0))
      }))
  })
})
