/**
 * The account event stream and the reply stream through the client, on a
 * real loopback server: typed events, typed refusals, and reconnection
 * through a proxy that cuts the connection mid-stream, with nothing missed
 * and nothing repeated.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { AccountEvents, ClientError, HostingClient, ReplyStream, type ServerSentEvents } from "@hosting/client"
import { Conversation, type Deployment, Ids } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Chunk, Duration, Effect, Queue, Stream } from "effect"
import { baseUrl, call, layer, proxy } from "./TestServer.js"

/** Fast reconnection for tests: the server asks for 3 s, the client caps it. */
const quick = { maxDelay: Duration.millis(150), maxAttempts: 5 } as const

/** Runs a stream into a queue in the background of the test's scope. */
const background = <A, E, R>(stream: Stream.Stream<A, E, R>) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<A>()
    yield* stream.pipe(Stream.runForEach((a) => Queue.offer(queue, a)), Effect.forkScoped)
    return (what: string) =>
      Queue.take(queue).pipe(Effect.timeoutFail({ duration: Duration.seconds(5), onTimeout: () => new Error(`no ${what} within 5 s`) }))
  })

const register = (team: Seed.Team, build: string) =>
  call("POST", `/agents/${team.account}/helper/register`, team.tokens.owner, {
    build_id: build,
    registry: "ghcr.io/acme",
    spec_content: "name: helper\ndescription: Helps\n"
  }).pipe(Effect.tap((r) => expect(r.status).toBe(201)))

const send = (team: Seed.Team, deployment: Deployment.DeploymentId, content: string) =>
  Effect.gen(function*() {
    const conversationId = Conversation.ConversationId.make(globalThis.crypto.randomUUID())
    const api = yield* HostingClient.make({ baseUrl: yield* baseUrl, token: team.tokens.member })
    const sent = yield* api.chat.send({ path: { deploymentId: deployment, conversationId }, payload: { content } })
    return { conversationId, sent }
  })

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(" ")

describe("event streams", () => {
  withLayer(layer({ echo: { delay: Duration.millis(25) } }), { excludeTestServices: true })((it) => {
    it.scoped("the account stream starts with ready (resync false), then typed agent.build events with their ids", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const next = yield* background(AccountEvents.follow({ baseUrl: yield* baseUrl, token: team.tokens.member, account: team.account }))
        expect(yield* next("ready")).toEqual(AccountEvents.AccountEvent.Ready({ resync: false }))
        yield* register(team, "b-1")
        const event = yield* next("agent.build")
        expect(event).toMatchObject({ _tag: "AgentBuild", agent: `${team.account}/helper`, build_id: "b-1", status: "registered" })
        expect(event._tag === "AgentBuild" && event.id.length > 0).toBe(true)
      }))

    it.effect("a refusal ends the stream at once with its typed error: 401 without a token, 403 for an outsider", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const base = yield* baseUrl
        const anonymous = yield* Effect.flip(Stream.runDrain(AccountEvents.follow({ baseUrl: base, account: team.account })))
        expect(anonymous._tag).toBe("Unauthorized")
        expect(yield* ClientError.describe(anonymous)).toMatchObject({ status: 401, error: "unauthorized" })
        const outsider = yield* Effect.flip(
          Stream.runDrain(AccountEvents.follow({ baseUrl: base, token: team.tokens.outsider, account: team.account }))
        )
        expect(outsider._tag).toBe("Forbidden")
      }))

    it.scoped("after a dropped connection the account stream reconnects with Last-Event-ID: what happened meanwhile arrives once, nothing repeats", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const cut = yield* proxy
        const resumedFrom: Array<string | undefined> = []
        const next = yield* background(AccountEvents.follow({
          baseUrl: cut.baseUrl,
          token: team.tokens.member,
          account: team.account,
          ...quick,
          onReconnect: (info) => Effect.sync(() => resumedFrom.push(info.lastEventId))
        }))
        expect(yield* next("ready")).toMatchObject({ _tag: "Ready", resync: false })
        yield* register(team, "b-1")
        const first = yield* next("b-1")
        cut.dropAll()
        // While the client waits to reconnect:
        yield* register(team, "b-2")
        yield* register(team, "b-3")
        expect(yield* next("ready again")).toMatchObject({ _tag: "Ready", resync: false })
        const second = yield* next("b-2")
        const third = yield* next("b-3")
        const builds = [first, second, third].map((e) => (e._tag === "AgentBuild" ? `${e.build_id}:${e.id}` : e._tag))
        expect(builds.map((b) => b.split(":")[0])).toEqual(["b-1", "b-2", "b-3"])
        expect(new Set(builds).size).toBe(3)
        expect(resumedFrom).toEqual([first._tag === "AgentBuild" ? first.id : "?"])
        expect(cut.accepted()).toBe(2)
      }))

    it.scoped("reply follows one reply: its deltas add up to the completed content, then it ends", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const text = words(8)
        const { conversationId } = yield* send(team, deployment.id, text)
        const parts = Chunk.toReadonlyArray(yield* Stream.runCollect(ReplyStream.reply({
          baseUrl: yield* baseUrl,
          token: team.tokens.member,
          deploymentId: deployment.id,
          conversationId
        })))
        const last = parts.at(-1)!
        expect(last._tag).toBe("Completed")
        const deltas = parts.filter((p) => p._tag === "Delta")
        expect(deltas.map((d) => d.delta).join("")).toBe(text)
        expect(last._tag === "Completed" && last.content).toBe(text)
        expect(new Set(parts.map((p) => p.message_id)).size).toBe(1)
      }))

    it.scoped("a reply stream cut mid-reply resumes after its last id: deltas stay contiguous, with no gap and no repeat", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const cut = yield* proxy
        const text = words(30)
        const { conversationId } = yield* send(team, deployment.id, text)
        const options = { baseUrl: cut.baseUrl, token: team.tokens.member, deploymentId: deployment.id, conversationId, ...quick }
        const next = yield* background(ReplyStream.events(options))
        const seen: Array<ReplyStream.ReplyEvent> = []
        while (seen.filter((e) => e._tag === "Delta").length < 3) seen.push(yield* next("a delta"))
        cut.dropAll()
        for (let i = 0; i < 100 && seen.at(-1)?._tag !== "Completed"; i++) seen.push(yield* next("the rest"))
        expect(cut.accepted()).toBeGreaterThanOrEqual(2)
        const deltas = seen.filter((e) => e._tag === "Delta")
        let expectedIndex = 0
        for (const delta of deltas) {
          expect(delta.index).toBe(expectedIndex)
          expectedIndex += delta.delta.length
        }
        expect(deltas.map((d) => d.delta).join("")).toBe(text)
        expect(seen.at(-1)).toMatchObject({ _tag: "Completed", content: text })
        const ids = seen.filter((e) => e._tag !== "Heartbeat").map((e) => (e as { id: string }).id)
        expect(new Set(ids).size).toBe(ids.length)
      }))

    it.effect("the reply stream of someone else's conversation is 404, typed", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const { conversationId } = yield* send(team, deployment.id, "hello")
        const error = yield* Effect.flip(Stream.runDrain(ReplyStream.reply({
          baseUrl: yield* baseUrl,
          token: team.tokens.owner,
          deploymentId: deployment.id,
          conversationId
        })))
        expect(yield* ClientError.describe(error)).toMatchObject({ status: 404 })
      }))

    it.effect("a server that cannot be reached ends the stream with ConnectionLost after the attempts allowed", () =>
      Effect.gen(function*() {
        const attempts: Array<ServerSentEvents.Reconnecting> = []
        const error = yield* Effect.flip(Stream.runDrain(AccountEvents.follow({
          baseUrl: "http://127.0.0.1:1/api/v1",
          account: Ids.AccountName.make("acme"),
          initialDelay: Duration.millis(10),
          maxDelay: Duration.millis(40),
          maxAttempts: 3,
          onReconnect: (info) => Effect.sync(() => attempts.push(info))
        })))
        expect(error._tag).toBe("ConnectionLost")
        expect(attempts.map((a) => Duration.toMillis(a.delay))).toEqual([10, 20])
        expect(yield* ClientError.describe(error)).toMatchObject({ kind: "network", error: "connection_lost" })
      }))
  })
})
