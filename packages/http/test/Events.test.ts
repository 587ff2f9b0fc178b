/**
 * GET /accounts/{account}/events over real HTTP: raw SSE, the eventsource
 * client with reconnects through a proxy that drops connections, replay,
 * the cap, resync, fan-out and isolation.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Deployment, EventBus, Events, Ids, Ports } from "@hosting/core"
import { Seed, StorageSuite } from "@hosting/testing"
import { EventSource } from "eventsource"
import { DateTime, Effect, Option } from "effect"
import { fibers, layer, port, raw } from "./HttpTestServer.js"
import { spawn } from "node:child_process"
import { get as httpGet, type IncomingMessage } from "node:http"
import { fileURLToPath } from "node:url"
import { open, proxy, type SseEvent } from "./sse.js"

const replayCap = 3

const clientScript = fileURLToPath(new URL("./fixtures/sse-clients.mjs", import.meta.url))

/** Waits in real time (it.effect runs on the test clock, where Effect.sleep never ends by itself). */
const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const base = Effect.map(port, (p) => `http://127.0.0.1:${p}/api/v1`)

const register = (team: Seed.Team, agent: string, build: string) =>
  raw("POST", `/agents/${team.account}/${agent}/register`, {
    token: team.tokens.owner,
    json: { build_id: build, registry: "ghcr.io/acme", spec_content: `name: ${agent}\ndescription: d\n` }
  }).pipe(Effect.tap((r) => expect(r.status).toBe(201)))

const stream = (team: Seed.Team, who: Seed.Person, headers: Record<string, string> = {}, query = "") =>
  Effect.flatMap(base, (url) =>
    Effect.promise(() =>
      open(`${url}/accounts/${team.account}/events${query}`, { authorization: `Bearer ${team.tokens[who]}`, ...headers })
    ))

const awaitEvents = (s: { next: (n: number, t?: number) => Promise<Array<SseEvent>> }, n: number, timeoutMs?: number) =>
  Effect.promise(() => s.next(n, timeoutMs))

describe("HTTP: account event stream", () => {
  // The live clock: the test clock keeps every interrupted sleep, which would look like a leak.
  withLayer(layer({ replayCap }), { excludeTestServices: true })((it) => {
    it.effect("the stream needs a token (401) and membership of the account (403); an unknown account is 403 too", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const url = yield* base
        const anonymous = yield* Effect.promise(() => open(`${url}/accounts/${team.account}/events`))
        expect(anonymous.status).toBe(401)
        expect(anonymous.body).toMatchObject({ error: "unauthorized" })
        const outsider = yield* stream(team, "outsider")
        expect(outsider.status).toBe(403)
        expect(outsider.body).toMatchObject({ error: "forbidden" })
        const nowhere = yield* Effect.promise(() =>
          open(`${url}/accounts/no-such-account/events`, { authorization: `Bearer ${team.tokens.owner}` })
        )
        expect(nowhere.status).toBe(403)
      }))

    it.effect("ready comes first with resync false and retry, then agent.build events carry id, agent, build_id and status", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const s = yield* stream(team, "member")
        expect(s.status).toBe(200)
        expect(s.headers.get("content-type")).toContain("text/event-stream")
        expect(s.headers.get("cache-control")).toBe("no-cache")
        expect(s.headers.get("x-accel-buffering")).toBe("no")
        expect(s.headers.get("content-encoding")).toBeNull()
        const [ready] = yield* awaitEvents(s, 1)
        expect(ready).toMatchObject({ event: "ready", data: { resync: false }, retry: 3000, id: undefined })
        yield* register(team, "helper", "b-1")
        yield* raw("POST", `/agents/${team.account}/helper/publish`, {
          token: team.tokens.owner,
          json: { build_id: "b-1", version: "1.0.0" }
        })
        const [registered, published] = yield* awaitEvents(s, 2)
        expect(registered).toMatchObject({
          event: "agent.build",
          data: { agent: `${team.account}/helper`, build_id: "b-1", status: "registered" }
        })
        expect(published).toMatchObject({ event: "agent.build", data: { build_id: "b-1", status: "published", version: "1.0.0" } })
        expect(BigInt(published!.id!) > BigInt(registered!.id!)).toBe(true)
        expect(published!.retry).toBeUndefined()
        s.close()
      }))

    it.effect("reconnecting with Last-Event-ID replays exactly the missed events; last_event_id works when headers cannot be set", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const first = yield* stream(team, "member")
        yield* awaitEvents(first, 1)
        yield* register(team, "helper", "b-1")
        const [seen] = yield* awaitEvents(first, 1)
        first.close()
        yield* register(team, "helper", "b-2")
        yield* register(team, "helper", "b-3")
        const byHeader = yield* stream(team, "member", { "last-event-id": seen!.id! })
        const replayed = yield* awaitEvents(byHeader, 3)
        expect(replayed.map((e) => [e.event, e.data.build_id ?? null])).toEqual([["ready", null], ["agent.build", "b-2"], ["agent.build", "b-3"]])
        expect(replayed[0]!.data).toEqual({ resync: false })
        byHeader.close()
        const byQuery = yield* stream(team, "member", {}, `?last_event_id=${seen!.id!}`)
        expect((yield* awaitEvents(byQuery, 3)).map((e) => e.data.build_id ?? e.event)).toEqual(["ready", "b-2", "b-3"])
        byQuery.close()
        const headerWins = yield* stream(team, "member", { "last-event-id": replayed[1]!.id! }, `?last_event_id=${seen!.id!}`)
        expect((yield* awaitEvents(headerWins, 2)).map((e) => e.data.build_id ?? e.event)).toEqual(["ready", "b-3"])
        headerWins.close()
      }))

    it.effect("when more events were missed than the replay cap, ready carries resync true and the newest events follow", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const first = yield* stream(team, "member")
        yield* awaitEvents(first, 1)
        yield* register(team, "helper", "b-0")
        const [seen] = yield* awaitEvents(first, 1)
        first.close()
        for (const b of ["b-1", "b-2", "b-3", "b-4", "b-5"]) yield* register(team, "helper", b)
        const again = yield* stream(team, "member", { "last-event-id": seen!.id! })
        const events = yield* awaitEvents(again, 1 + replayCap)
        expect(events[0]).toMatchObject({ event: "ready", data: { resync: true } })
        expect(events.slice(1).map((e) => e.data.build_id)).toEqual(["b-3", "b-4", "b-5"])
        again.close()
      }))

    it.effect("an id the log never issued gives resync true and no replay", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        yield* register(team, "helper", "b-1")
        for (const id of ["999999999999", "not-an-id"]) {
          const s = yield* stream(team, "member", { "last-event-id": id })
          const [ready] = yield* awaitEvents(s, 1)
          expect(ready).toMatchObject({ event: "ready", data: { resync: true } })
          yield* realSleep(100)
          expect(s.pending()).toEqual([])
          s.close()
        }
      }))

    it.effect("events of agent P/x reach every account deploying P/x, and never an unrelated account", () =>
      Effect.gen(function*() {
        const publisher = yield* Seed.team
        const deployer = yield* Seed.team
        const unrelated = yield* Seed.team
        const accounts = yield* Ports.AccountStore
        const idOf = (name: Ids.AccountName) => Effect.map(accounts.findByName(name), (a) => Option.getOrThrow(a).id)
        const deployments = yield* Ports.DeploymentStore
        yield* deployments.upsert({
          id: Deployment.DeploymentId.make(StorageSuite.uniqueName("dep")),
          account_id: yield* idOf(deployer.account),
          publisher_id: yield* idOf(publisher.account),
          agent_name: Ids.AgentName.make("shared"),
          build_id: Ids.BuildId.make("b-1"),
          namespace: "ns",
          status: "running",
          deployed_at: DateTime.unsafeMake("2026-11-01T00:00:00Z"),
          undeployed_at: Option.none(),
          spec: {}
        })
        const atPublisher = yield* stream(publisher, "member")
        const atDeployer = yield* stream(deployer, "member")
        const atUnrelated = yield* stream(unrelated, "owner")
        for (const s of [atPublisher, atDeployer, atUnrelated]) yield* awaitEvents(s, 1)
        yield* register(publisher, "shared", "b-2")
        yield* register(publisher, "private", "b-1")
        const [p1, p2] = yield* awaitEvents(atPublisher, 2)
        expect([p1!.data.agent, p2!.data.agent]).toEqual([`${publisher.account}/shared`, `${publisher.account}/private`])
        const [d1] = yield* awaitEvents(atDeployer, 1)
        expect(d1!.data).toMatchObject({ agent: `${publisher.account}/shared`, build_id: "b-2" })
        yield* realSleep(200)
        expect(atDeployer.pending()).toEqual([])
        expect(atUnrelated.pending()).toEqual([])
        for (const s of [atPublisher, atDeployer, atUnrelated]) s.close()
      }))

    it.effect("the eventsource client reconnects after the connection drops and resumes with Last-Event-ID: no gap, no duplicate", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const serverPort = yield* port
        const relay = yield* Effect.promise(() => proxy(serverPort))
        const received: Array<{ type: string; id: string; data: any }> = []
        const source = new EventSource(`http://127.0.0.1:${relay.port}/api/v1/accounts/${team.account}/events`, {
          fetch: (input, init) =>
            fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${team.tokens.member}` } })
        })
        for (const type of ["ready", "agent.build"]) {
          source.addEventListener(type, (e) => received.push({ type, id: e.lastEventId, data: JSON.parse(e.data) }))
        }
        const waitFor = (count: number) =>
          Effect.promise(async () => {
            const deadline = Date.now() + 10_000
            while (received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
            expect(received.length).toBeGreaterThanOrEqual(count)
          })
        yield* waitFor(1)
        yield* register(team, "helper", "b-1")
        yield* waitFor(2)
        relay.dropAll()
        yield* register(team, "helper", "b-2")
        yield* register(team, "helper", "b-3")
        yield* waitFor(5)
        yield* register(team, "helper", "b-4")
        yield* waitFor(6)
        source.close()
        yield* Effect.promise(() => relay.close())
        expect(received.map((e) => e.type === "ready" ? `ready:${e.data.resync}` : e.data.build_id)).toEqual([
          "ready:false",
          "b-1",
          "ready:false",
          "b-2",
          "b-3",
          "b-4"
        ])
        const ids = received.filter((e) => e.type === "agent.build").map((e) => BigInt(e.id))
        expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)))
      }), { timeout: 30_000 })

    it.effect("a client that stops reading is paused, not buffered without end; reading again, it gets every event it missed, in order", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const url = yield* base
        const accounts = yield* Ports.AccountStore
        const account = Option.getOrThrow(yield* accounts.findByName(team.account))
        const log = yield* Ports.EventLog
        const bus = yield* EventBus.EventBus
        const received: Array<number> = []
        let text = ""
        let arrived: () => void = () => {}
        const response = yield* Effect.promise(() =>
          new Promise<IncomingMessage>((resolve, reject) => {
            const request = httpGet(`${url}/accounts/${team.account}/events`, { headers: { authorization: `Bearer ${team.tokens.member}` } }, (res) => {
              res.setEncoding("utf8")
              res.on("data", (chunk: string) => {
                text += chunk
                let end = text.indexOf("\n\n")
                while (end >= 0) {
                  const n = /"n":(\d+)/.exec(text.slice(0, end))
                  if (n !== null) received.push(Number(n[1]))
                  text = text.slice(end + 2)
                  end = text.indexOf("\n\n")
                }
                arrived()
              })
              res.once("data", () => resolve(res))
            })
            request.on("error", reject)
          })
        )
        // About 8 MB of events while the client reads nothing: far more than the connection's buffers hold.
        response.pause()
        const total = 4000
        const padding = "x".repeat(2000)
        for (let first = 0; first < total; first += 200) {
          yield* log.append(
            Array.from({ length: 200 }, (_, i) => ({ account_id: account.id, type: "agent.build", data: { n: first + i, padding } })),
            yield* DateTime.now
          )
          yield* bus.publish([account.id])
          yield* realSleep(5)
        }
        const done = Effect.promise(() =>
          new Promise<void>((resolve) => {
            const check = () => received.length >= total && resolve()
            arrived = check
            check()
          })
        )
        response.resume()
        yield* done.pipe(Effect.timeout("30 seconds"))
        response.destroy()
        expect(received).toEqual(Array.from({ length: total }, (_, i) => i))
      }), { timeout: 60_000 })

    it.effect("a client that disconnects frees its subscription: 1,000 streams opened and dropped leave no stream, subscriber, fiber or memory behind", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const bus = yield* EventBus.EventBus
        const events = yield* Events.Events
        const url = yield* base
        const gc = (globalThis as { gc?: () => void }).gc
        expect(gc, "tests run with --expose-gc (vitest.config.ts)").toBeTypeOf("function")
        // A stream of an earlier test closes once the server notices its client left: wait for that,
        // so that the counts below are this test's alone.
        for (let i = 0; i < 200 && (yield* events.openStreams) > 0; i++) yield* realSleep(50)
        const openAndDrop = Effect.gen(function*() {
          const subscribersBefore = yield* bus.subscribers
          const streamsBefore = yield* events.openStreams
          const fibersBefore = (yield* fibers.value).length
          // The clients run in their own process, so the heap measured here is the server's alone.
          const clients = spawn(process.execPath, [clientScript, `${url}/accounts/${team.account}/events`, team.tokens.member, "1000"], {
            stdio: ["pipe", "pipe", "inherit"]
          })
          const exited = new Promise((resolve) => clients.on("exit", resolve))
          yield* Effect.promise(() => new Promise((resolve) => clients.stdout.once("data", resolve)))
          expect(yield* events.openStreams).toBe(streamsBefore + 1000)
          // The streams of one account share one subscription to the bus.
          expect(yield* bus.subscribers).toBe(subscribersBefore + 1)
          // An open stream is handed off to its Node response: it holds no fiber of its own.
          expect((yield* fibers.value).length).toBeLessThan(fibersBefore + 50)
          clients.stdin.write("drop\n")
          yield* Effect.promise(() => exited)
          const settled = Effect.gen(function*() {
            return (yield* bus.subscribers) === subscribersBefore && (yield* events.openStreams) === streamsBefore &&
              (yield* fibers.value).length <= fibersBefore
          })
          const deadline = Date.now() + 10_000
          while (!(yield* settled) && Date.now() < deadline) yield* realSleep(50)
          expect(yield* bus.subscribers).toBe(subscribersBefore)
          expect(yield* events.openStreams).toBe(streamsBefore)
          expect((yield* fibers.value).length).toBeLessThanOrEqual(fibersBefore)
          yield* realSleep(200)
          gc!()
          gc!()
          return process.memoryUsage().heapUsed
        })
        // The first round warms up code and caches; the rounds after it must not grow the heap.
        const afterWarmUp = yield* openAndDrop
        yield* openAndDrop
        const afterThird = yield* openAndDrop
        expect(afterThird - afterWarmUp).toBeLessThan(2 * 1024 * 1024)
      }), { timeout: 90_000 })
  })
})
