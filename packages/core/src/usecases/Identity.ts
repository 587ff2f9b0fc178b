/**
 * Authentication: a bearer token becomes a Principal. Tokens are kept only
 * as SHA-256 hashes; the stored hash is compared in constant time.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { Context, DateTime, Effect, Option } from "effect"
import { type StorageError, Unauthenticated } from "../model/Errors.js"
import { TokenStore } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"
import * as Steps from "../runtime/Steps.js"

/**
 * SHA-256 of a text's UTF-8 bytes in lowercase hex: how tokens and codes
 * are kept. The default is @noble/hashes, computed synchronously (Web
 * Crypto's digest hands each call to a worker thread, which costs a request
 * many times the hashing itself), so the core runs anywhere. A server on
 * Node gives the platform's own under the same key (`@hosting/http-node`'s
 * `NodeServer.layer` does, for every request): about 0.3 µs for a token
 * against 2, and an authenticated request hashes its credential twice (its
 * rate limit and its authentication). Any implementation must give the
 * same hex for the same text.
 */
export class Sha256Hex extends Context.Reference<Sha256Hex>()("@hosting/Sha256Hex", {
  defaultValue: (): (text: string) => string => (text) => bytesToHex(sha256(utf8ToBytes(text)))
}) {}

/** SHA-256 of a token, hex encoded, with the running fiber's `Sha256Hex`. */
export const hashToken = (token: string): Effect.Effect<string> =>
  Effect.withFiberRuntime((fiber) => Effect.succeed(Context.get(fiber.currentContext, Sha256Hex)(token)))

/** Compares two strings without stopping at the first difference. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  let diff = a.length ^ b.length
  const length = Math.max(a.length, b.length)
  for (let i = 0; i < length; i++) {
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  }
  return diff === 0
}

const maxTokenLength = 4096

/** What a token may reach, as `TokenStore.add` takes it. */
type TokenLimitsInput = Parameters<TokenStore["Type"]["add"]>[0]["limits"]

export class Identity extends Effect.Service<Identity>()("@hosting/core/Identity", {
  effect: Effect.gen(function*() {
    const tokens = yield* TokenStore

    const rejected = new Unauthenticated({ details: "The access token is not valid or has expired; sign in again." })

    const refused = Effect.fail(rejected)

    /** What the token store finds of a token. */
    type Found = Option.Option.Value<Effect.Effect.Success<ReturnType<typeof tokens.findPrincipal>>>

    /** The principals of limited tokens, made once per record the store answered (its cache answers the same one). */
    const limitedPrincipals = new WeakMap<Found, Principal>()

    /** What a token may do: its user's principal, narrowed to the token's accounts and scopes. */
    const principalOf = (found: Found): Principal => {
      const { limits, principal } = found
      if (Option.isNone(limits.scopes) && Option.isNone(limits.accounts)) return principal
      const known = limitedPrincipals.get(found)
      if (known !== undefined) return known
      const accounts = limits.accounts
      const limited: Principal = {
        user: principal.user,
        memberships: Option.isNone(accounts)
          ? principal.memberships
          : principal.memberships.filter((m) => accounts.value.includes(m.account_id)),
        scopes: Option.getOrUndefined(limits.scopes),
        accounts: Option.getOrUndefined(accounts)
      }
      limitedPrincipals.set(found, limited)
      return limited
    }

    /** When each personal access token's use was last written (by hash), so that it is written at most once a minute. */
    const lastUseWritten = new Map<string, number>()
    const useInterval = 60_000

    /** Records a personal access token's use, at most once a minute per process; a failure to write is only logged. */
    const recordUse = (found: Found, now: DateTime.Utc): Effect.Effect<void> => {
      if (Option.isNone(found.limits.id)) return Effect.void
      const millis = DateTime.toEpochMillis(now)
      const written = lastUseWritten.get(found.hash)
      if (written !== undefined && millis - written < useInterval) return Effect.void
      if (lastUseWritten.size >= 10_000) lastUseWritten.clear()
      lastUseWritten.set(found.hash, millis)
      return Effect.catchAll(tokens.touch(found.hash, now), (error) => Effect.logWarning("could not record a token's use", error))
    }

    /** The principal of a token found with its hash, unless the hashes differ or it has expired. */
    const check = (found: Option.Option<Found>, hash: string): Effect.Effect<Principal, Unauthenticated> => {
      if (Option.isNone(found) || !constantTimeEqual(found.value.hash, hash)) return refused
      const record = found.value
      const { expires_at } = record
      if (Option.isNone(expires_at) && Option.isNone(record.limits.id)) return Effect.succeed(principalOf(record))
      return Steps.withNow((now) =>
        Option.isSome(expires_at) && DateTime.lessThanOrEqualTo(expires_at.value, now)
          ? refused
          : Effect.as(recordUse(record, now), principalOf(record)))
    }

    /**
     * The principal of a bearer token; unknown or expired tokens are refused.
     * Written as a chain rather than a generator: it runs on every
     * authenticated request.
     */
    const authenticate = (token: string): Effect.Effect<Principal, Unauthenticated | StorageError> =>
      Tracing.withSpan("Identity.authenticate")(Effect.withFiberRuntime((fiber) => {
        if (token.length === 0 || token.length > maxTokenLength) return refused
        const hash = Context.get(fiber.currentContext, Sha256Hex)(token)
        return Effect.flatMap(tokens.findPrincipal(hash), (found) => check(found, hash))
      }))

    /**
     * Stores a token for a user (fixtures, sign-in flows). A token made from
     * another credential names that one's hash (`parentHash`): it ends when
     * the parent is revoked, and is refused (Unauthenticated) when the parent
     * is gone already. Without `limits` it has the parent's (none without a
     * parent).
     */
    const issue = Tracing.fn("Identity.issue")(function*(
      userId: Principal["user"]["id"],
      token: string,
      expiresAt: Option.Option<DateTime.Utc> = Option.none(),
      parentHash: Option.Option<string> = Option.none(),
      limits?: TokenLimitsInput
    ) {
      const hash = yield* hashToken(token)
      const now = yield* DateTime.now
      const stored = yield* tokens.add({ hash, user_id: userId, expires_at: expiresAt, parent_hash: parentHash, now, limits })
      if (!stored) return yield* rejected
    })

    return { authenticate, issue } as const
  })
}) {}
