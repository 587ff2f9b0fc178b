/**
 * The principals of recent tokens are kept for a short time and forgotten
 * at every write that may change one: a revoked token, a renamed account, a
 * changed membership or user never authenticate as they were.
 */
import { describe, expect, it } from "@effect/vitest"
import { Account, Ids, Ports, PrincipalCache } from "@hosting/core"
import { MemoryStorage } from "@hosting/testing"
import { Context, DateTime, Deferred, Duration, Effect, Fiber, Layer, Option, TestClock } from "effect"

/** How many reads reached the store beneath the cache. */
let reads = 0
/** When set, the store's reads wait for it before answering: a read in flight across a write. */
let gate: Deferred.Deferred<void> | undefined

const counted = Layer.effectContext(Effect.gen(function*() {
  const tokens = yield* Ports.TokenStore
  const accounts = yield* Ports.AccountStore
  return Context.make(Ports.TokenStore, {
    ...tokens,
    findPrincipal: (hash: string) =>
      Effect.suspend(() => {
        reads++
        // Read first, then wait: the answer of a read that is still on its way back when a write lands.
        const wait = gate === undefined ? Effect.void : Deferred.await(gate)
        return Effect.zipLeft(tokens.findPrincipal(hash), wait)
      })
  }).pipe(Context.add(Ports.AccountStore, accounts))
}))

const cached = (ttl: Duration.DurationInput) =>
  PrincipalCache.layer.pipe(
    Layer.provide(Layer.succeed(PrincipalCache.PrincipalCacheConfig, { ttl: Duration.decode(ttl), maxEntries: 100 })),
    Layer.provide(counted),
    Layer.provideMerge(MemoryStorage.layer)
  )

const userId = Ids.UserId.make("u-cache")
const accountId = Ids.AccountId.make("a-cache")

/** A user with a token and one membership; returns the token's hash. */
const seed = Effect.gen(function*() {
  const accounts = yield* Ports.AccountStore
  const tokens = yield* Ports.TokenStore
  const now = yield* DateTime.now
  yield* accounts.upsertUser(new Account.User({ id: userId, name: "Cache" }))
  yield* accounts.ensure({ id: accountId, name: Ids.AccountName.make("cache-team"), now })
  yield* accounts.setMembership(accountId, userId, "member")
  const hash = `hash-${Math.random()}`
  yield* tokens.add({ hash, user_id: userId, expires_at: Option.none(), parent_hash: Option.none(), now })
  reads = 0
  return hash
})

const principalOf = (hash: string) =>
  Effect.map(Effect.flatMap(Ports.TokenStore, (tokens) => tokens.findPrincipal(hash)), Option.map((found) => found.principal))

describe("PrincipalCache", () => {
  it.effect("a token's principal is read once within the time it is kept, and again after", () =>
    Effect.gen(function*() {
      const hash = yield* seed
      expect(Option.isSome(yield* principalOf(hash))).toBe(true)
      expect(Option.isSome(yield* principalOf(hash))).toBe(true)
      expect(reads).toBe(1)
      yield* TestClock.adjust("1001 millis")
      yield* principalOf(hash)
      expect(reads).toBe(2)
    }).pipe(Effect.provide(cached("1 second"))))

  it.effect("a revoked token is never served from what was kept", () =>
    Effect.gen(function*() {
      const hash = yield* seed
      yield* principalOf(hash)
      yield* Effect.flatMap(Ports.TokenStore, (tokens) => tokens.remove(hash))
      expect(Option.isNone(yield* principalOf(hash))).toBe(true)
      expect(reads).toBe(2)
    }).pipe(Effect.provide(cached("1 minute"))))

  it.effect("a renamed account, a changed role and a renamed user show at once", () =>
    Effect.gen(function*() {
      const hash = yield* seed
      const accounts = yield* Ports.AccountStore
      yield* principalOf(hash)
      yield* accounts.rename(accountId, Ids.AccountName.make("cache-renamed"))
      expect(Option.getOrThrow(yield* principalOf(hash)).memberships.map((m) => m.account)).toEqual(["cache-renamed"])
      yield* accounts.setMembership(accountId, userId, "admin")
      expect(Option.getOrThrow(yield* principalOf(hash)).memberships.map((m) => m.role)).toEqual(["admin"])
      yield* accounts.upsertUser(new Account.User({ id: userId, name: "Renamed" }))
      expect(Option.getOrThrow(yield* principalOf(hash)).user.name).toBe("Renamed")
      expect(reads).toBe(4)
    }).pipe(Effect.provide(cached("1 minute"))))

  it.effect("a read that began before a write does not keep what it read", () =>
    Effect.gen(function*() {
      const hash = yield* seed
      gate = yield* Deferred.make<void>()
      const inFlight = yield* Effect.fork(principalOf(hash))
      yield* Effect.yieldNow()
      yield* Effect.flatMap(Ports.AccountStore, (accounts) => accounts.setMembership(accountId, userId, "owner"))
      yield* Deferred.succeed(gate, undefined)
      gate = undefined
      yield* Fiber.join(inFlight)
      expect(Option.getOrThrow(yield* principalOf(hash)).memberships.map((m) => m.role)).toEqual(["owner"])
      expect(reads).toBe(2)
    }).pipe(Effect.provide(cached("1 minute"))))

  it.effect("unknown tokens are not kept; a ttl of zero keeps nothing", () =>
    Effect.gen(function*() {
      const hash = yield* seed
      yield* principalOf("unknown")
      yield* principalOf("unknown")
      yield* principalOf(hash)
      yield* principalOf(hash)
      expect(reads).toBe(4)
    }).pipe(Effect.provide(cached(0))))

  it.effect("unknown tokens are never kept, even with a ttl", () =>
    Effect.gen(function*() {
      yield* seed
      yield* principalOf("unknown")
      yield* principalOf("unknown")
      expect(reads).toBe(2)
    }).pipe(Effect.provide(cached("1 minute"))))
})
