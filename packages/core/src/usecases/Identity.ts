/**
 * Authentication: a bearer token becomes a Principal. Tokens are kept only
 * as SHA-256 hashes; the stored hash is compared in constant time.
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"
import { DateTime, Effect, Option } from "effect"
import { type StorageError, Unauthenticated } from "../model/Errors.js"
import { TokenStore } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"

/**
 * SHA-256 of a token, hex encoded, computed synchronously (@noble/hashes):
 * Web Crypto's digest hands each call to a worker thread, which costs a
 * request many times the hashing itself.
 */
export const hashToken = (token: string): Effect.Effect<string> => Effect.sync(() => bytesToHex(sha256(utf8ToBytes(token))))

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

export class Identity extends Effect.Service<Identity>()("@hosting/core/Identity", {
  effect: Effect.gen(function*() {
    const tokens = yield* TokenStore

    const rejected = new Unauthenticated({ details: "The access token is not valid or has expired; sign in again." })

    const refused = Effect.fail(rejected)

    /** What the token store finds of a token. */
    type Found = Option.Option.Value<Effect.Effect.Success<ReturnType<typeof tokens.findPrincipal>>>

    /** The principal of a token found with its hash, unless the hashes differ or it has expired. */
    const check = (found: Option.Option<Found>, hash: string): Effect.Effect<Principal, Unauthenticated> => {
      if (Option.isNone(found) || !constantTimeEqual(found.value.hash, hash)) return refused
      const { expires_at, principal } = found.value
      if (Option.isNone(expires_at)) return Effect.succeed(principal)
      return Effect.flatMap(DateTime.now, (now) => DateTime.lessThanOrEqualTo(expires_at.value, now) ? refused : Effect.succeed(principal))
    }

    /**
     * The principal of a bearer token; unknown or expired tokens are refused.
     * Written as a chain rather than a generator: it runs on every
     * authenticated request.
     */
    const authenticate = (token: string): Effect.Effect<Principal, Unauthenticated | StorageError> =>
      Tracing.withSpan("Identity.authenticate")(Effect.suspend(() => {
        if (token.length === 0 || token.length > maxTokenLength) return refused
        const hash = bytesToHex(sha256(utf8ToBytes(token)))
        return Effect.flatMap(tokens.findPrincipal(hash), (found) => check(found, hash))
      }))

    /**
     * Stores a token for a user (fixtures, sign-in flows). A token made from
     * another credential names that one's hash (`parentHash`): it ends when
     * the parent is revoked, and is refused (Unauthenticated) when the parent
     * is gone already.
     */
    const issue = Tracing.fn("Identity.issue")(function*(
      userId: Principal["user"]["id"],
      token: string,
      expiresAt: Option.Option<DateTime.Utc> = Option.none(),
      parentHash: Option.Option<string> = Option.none()
    ) {
      const hash = yield* hashToken(token)
      const now = yield* DateTime.now
      const stored = yield* tokens.add({ hash, user_id: userId, expires_at: expiresAt, parent_hash: parentHash, now })
      if (!stored) return yield* rejected
    })

    return { authenticate, issue } as const
  })
}) {}
