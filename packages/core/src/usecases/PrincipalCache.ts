/**
 * The principals of tokens seen lately, kept in memory for a short time, so
 * that a client's requests do not each read its token, user and memberships
 * again (the read is most of a small authenticated request).
 *
 * It sits between the use cases and storage, as a TokenStore and an
 * AccountStore around the real ones: every write through them that can
 * change a principal (a token removed, a user, an account or a membership
 * written) forgets everything at once, so on one process nothing stale is
 * ever served. A read that began before such a write does not keep what it
 * read. Expiry stays exact: `Identity.authenticate` checks the kept expiry
 * on every request. Only tokens that authenticate are kept, at most
 * `maxEntries` of them (the oldest go first).
 *
 * Several processes on one database each keep their own: a write on one is
 * seen by the others once their entry is older than `ttl` (1 s by default).
 * A `ttl` of zero keeps nothing.
 */
import { Context, Duration, Effect, Layer, Option } from "effect"
import { AccountStore, TokenStore } from "../ports/Ports.js"
import * as Recent from "../runtime/Recent.js"
import * as Steps from "../runtime/Steps.js"

export interface PrincipalCacheOptions {
  /** How long a principal is kept after it was read (0: not kept). */
  readonly ttl: Duration.Duration
  /** Most principals kept. */
  readonly maxEntries: number
}

/** The cache's settings; 1 s and 10,000 principals unless a server says otherwise. */
export class PrincipalCacheConfig extends Context.Reference<PrincipalCacheConfig>()("@hosting/core/PrincipalCacheConfig", {
  defaultValue: (): PrincipalCacheOptions => ({ ttl: Duration.seconds(1), maxEntries: 10_000 })
}) {}

/** What a token store finds of a token: its hash, its expiry and its principal. */
type Found = Option.Option.Value<Effect.Effect.Success<ReturnType<TokenStore["Type"]["findPrincipal"]>>>

/** The TokenStore and AccountStore of context, with the principals of recent tokens kept. */
export const layer = Layer.effectContext(Effect.gen(function*() {
  const config = yield* PrincipalCacheConfig
  const tokens = yield* TokenStore
  const accounts = yield* AccountStore
  const ttl = Duration.toMillis(config.ttl)
  if (ttl <= 0) return Context.make(TokenStore, tokens).pipe(Context.add(AccountStore, accounts))

  const entries = Recent.make<string, { readonly found: Found; readonly at: number }>(config.maxEntries)
  /** Grows at every write that may change a principal: a read that began before one keeps nothing. */
  let generation = 0
  const forget = Effect.sync(() => {
    generation++
    entries.clear()
  })
  /** A write that may change principals: everything kept is forgotten when it starts and when it ends. */
  const changing = <A, E>(write: Effect.Effect<A, E>) => Effect.zipRight(forget, Effect.ensuring(write, forget))

  const findPrincipal: TokenStore["Type"]["findPrincipal"] = (hash) =>
    Steps.withClock((clock) => {
      const now = clock.unsafeCurrentTimeMillis()
      const kept = entries.get(hash)
      if (kept !== undefined && now - kept.at < ttl) return Effect.succeed(Option.some(kept.found))
      const before = generation
      return Effect.tap(tokens.findPrincipal(hash), (found) => {
        if (Option.isNone(found) || generation !== before) return
        entries.set(hash, { found: found.value, at: now })
      })
    })

  return Context.make(
    TokenStore,
    TokenStore.of({
      ...tokens,
      findPrincipal,
      remove: (hash) => changing(tokens.remove(hash)),
      removePersonal: (userId, id) => changing(tokens.removePersonal(userId, id))
    })
  ).pipe(Context.add(
    AccountStore,
    AccountStore.of({
      ...accounts,
      ensure: (input) => changing(accounts.ensure(input)),
      create: (input) => changing(accounts.create(input)),
      rename: (id, name) => changing(accounts.rename(id, name)),
      upsertUser: (user) => changing(accounts.upsertUser(user)),
      addUser: (input) => changing(accounts.addUser(input)),
      deleteAccount: (id) => changing(accounts.deleteAccount(id)),
      setMembership: (accountId, userId, role) => changing(accounts.setMembership(accountId, userId, role)),
      removeMembership: (accountId, userId) => changing(accounts.removeMembership(accountId, userId))
    })
  ))
}))
