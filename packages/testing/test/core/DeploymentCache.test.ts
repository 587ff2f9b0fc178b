/**
 * Deployment records and agent histories are kept in the process and
 * forgotten at every write through the cache that may change one (a
 * deploy, a status, an account's rename), again when the transaction of
 * such a write commits, at every wake-up of an account they depend on (a
 * change on another process) and every 10 s whatever happened: what is
 * served is never behind a write that returned on this process.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deployment, DeploymentCache, EventBus, Ids, Ports } from "@hosting/core"
import { MemoryStorage } from "@hosting/testing"
import { Context, DateTime, Deferred, Effect, Fiber, Layer, Option, TestClock } from "effect"

/** How many reads reached the store beneath the cache. */
let reads = 0
/** When set, the store's history reads wait for it before answering: a read in flight across a write. */
let gate: Deferred.Deferred<void> | undefined

const counted = Layer.effectContext(Effect.gen(function*() {
  const store = yield* Ports.DeploymentStore
  const accounts = yield* Ports.AccountStore
  return Context.make(Ports.DeploymentStore, {
    ...store,
    findById: (id: Deployment.DeploymentId) => Effect.suspend(() => (reads++, store.findById(id))),
    listForAgent: (publisherId: Ids.AccountId, agentName: Ids.AgentName, accountIds: ReadonlyArray<Ids.AccountId>) =>
      Effect.suspend(() => {
        reads++
        const wait = gate === undefined ? Effect.void : Deferred.await(gate)
        return Effect.zipLeft(store.listForAgent(publisherId, agentName, accountIds), wait)
      })
  }).pipe(Context.add(Ports.AccountStore, accounts))
}))

const cachedOn = <R>(storage: Layer.Layer<R>) =>
  DeploymentCache.layer().pipe(Layer.provide(counted), Layer.provideMerge(storage))
const cached = cachedOn(Layer.merge(MemoryStorage.layer, EventBus.layerLocal))
/** Without an event bus. */
const uncached = cachedOn(MemoryStorage.layer)

const publisher = Ids.AccountId.make("a-publisher")
const deployer = Ids.AccountId.make("a-deployer")
const agent = Ids.AgentName.make("helper")

const deploy = (n: number) =>
  Effect.gen(function*() {
    const store = yield* Ports.DeploymentStore
    const id = Deployment.DeploymentId.make(`dep-cache-${n}`)
    yield* store.upsert({
      id,
      account_id: deployer,
      publisher_id: publisher,
      agent_name: agent,
      build_id: Ids.BuildId.make(`b-${n}`),
      namespace: `deployer-helper`,
      status: "running",
      deployed_at: DateTime.unsafeMake(Date.UTC(2026, 0, n)),
      undeployed_at: Option.none(),
      spec: { replicas: 1 }
    })
    return id
  })

const seed = Effect.gen(function*() {
  const accounts = yield* Ports.AccountStore
  const now = yield* DateTime.now
  yield* accounts.ensure({ id: publisher, name: Ids.AccountName.make("publisher"), now })
  yield* accounts.ensure({ id: deployer, name: Ids.AccountName.make("deployer"), now })
  const id = yield* deploy(1)
  reads = 0
  return id
})

const history = Effect.flatMap(Ports.DeploymentStore, (store) => store.listForAgent(publisher, agent, [deployer]))

describe("DeploymentCache", () => {
  it.effect("an agent's history is read once and kept; a deploy through the cache shows at once", () =>
    Effect.gen(function*() {
      yield* seed
      // The first read follows the accounts; the next one keeps; the third is served from the cache.
      yield* history
      yield* history
      expect((yield* history).map((d) => d.id)).toEqual(["dep-cache-1"])
      expect(reads).toBe(2)
      yield* deploy(2)
      expect((yield* history).map((d) => d.id)).toEqual(["dep-cache-2", "dep-cache-1"])
      expect(reads).toBe(3)
    }).pipe(Effect.provide(cached)))

  it.effect("a changed status, settings and a renamed account show at once; so does a record read by id", () =>
    Effect.gen(function*() {
      const id = yield* seed
      const store = yield* Ports.DeploymentStore
      const accounts = yield* Ports.AccountStore
      yield* history
      yield* store.findById(id)
      yield* history
      yield* store.findById(id)
      yield* store.setStatus(id, "running", { status: "degraded", status_reason: "CrashLoop" })
      expect((yield* history)[0]!.status).toBe("degraded")
      expect(Option.getOrThrow(yield* store.findById(id)).status).toBe("degraded")
      yield* store.updateSettings(id, { concurrent_send: "queue" })
      expect((yield* history)[0]!.concurrent_send).toBe("queue")
      yield* accounts.rename(deployer, Ids.AccountName.make("deployer-renamed"))
      expect(Option.getOrThrow(yield* store.findById(id)).account).toBe("deployer-renamed")
      expect((yield* history)[0]!.account).toBe("deployer-renamed")
    }).pipe(Effect.provide(cached)))

  it.effect("a wake-up of an account it depends on (a change on another process) forgets what was kept", () =>
    Effect.gen(function*() {
      yield* seed
      const bus = yield* EventBus.EventBus
      yield* history
      yield* history
      yield* history
      expect(reads).toBe(2)
      yield* bus.publish([publisher])
      // The wake-up is taken by the cache's own fiber.
      yield* Effect.yieldNow()
      yield* history
      expect(reads).toBe(3)
    }).pipe(Effect.provide(cached)))

  it.effect("a read that began before a write does not keep what it read", () =>
    Effect.gen(function*() {
      yield* seed
      yield* history
      gate = yield* Deferred.make<void>()
      const inFlight = yield* Effect.fork(history)
      yield* Effect.yieldNow()
      yield* deploy(2)
      yield* Deferred.succeed(gate, undefined)
      gate = undefined
      yield* Fiber.join(inFlight)
      expect((yield* history).map((d) => d.id)).toEqual(["dep-cache-2", "dep-cache-1"])
    }).pipe(Effect.provide(cached)))

  it.effect("what was read while a transaction that wrote was open is forgotten once it commits", () =>
    Effect.gen(function*() {
      yield* seed
      const tx = yield* Ports.Transactor
      yield* tx.withTransaction(Effect.gen(function*() {
        yield* deploy(2)
        // Kept meanwhile: on Postgres, a read on another connection would still see the state before the commit.
        yield* history
        yield* history
      }))
      const before = reads
      expect((yield* history).map((d) => d.id)).toEqual(["dep-cache-2", "dep-cache-1"])
      expect(reads).toBe(before + 1)
    }).pipe(Effect.provide(cached)))

  it.effect("everything kept is forgotten every 10 s, whatever happened (a wake-up that was lost)", () =>
    Effect.gen(function*() {
      yield* seed
      yield* history
      yield* history
      yield* history
      expect(reads).toBe(2)
      yield* TestClock.adjust("10 seconds")
      yield* history
      expect(reads).toBe(3)
    }).pipe(Effect.provide(cached)))

  it.effect("without an event bus nothing is kept", () =>
    Effect.gen(function*() {
      yield* seed
      yield* history
      yield* history
      yield* history
      expect(reads).toBe(3)
    }).pipe(Effect.provide(uncached)))
})
