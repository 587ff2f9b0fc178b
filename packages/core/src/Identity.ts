/**
 * Authentication: a bearer token becomes a Principal. Tokens are kept only
 * as SHA-256 hashes; the stored hash is compared in constant time.
 */
import { DateTime, Effect, Option } from "effect"
import { Unauthenticated } from "./Errors.js"
import { AccountStore, TokenStore } from "./Ports.js"
import type { Principal } from "./Principal.js"

const hex = (bytes: ArrayBuffer) => Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("")

/** SHA-256 of a token, hex encoded (Web Crypto, available in Node and browsers). */
export const hashToken = (token: string): Effect.Effect<string> =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(token))).pipe(
    Effect.map(hex)
  )

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
    const accounts = yield* AccountStore

    const rejected = new Unauthenticated({ details: "The access token is not valid or has expired; sign in again." })

    /** The principal of a bearer token; unknown or expired tokens are refused. */
    const authenticate = Effect.fn("Identity.authenticate")(function*(token: string) {
      if (token.length === 0 || token.length > maxTokenLength) return yield* rejected
      const hash = yield* hashToken(token)
      const found = yield* tokens.findByHash(hash)
      if (Option.isNone(found) || !constantTimeEqual(found.value.hash, hash)) return yield* rejected
      const now = yield* DateTime.now
      if (Option.isSome(found.value.expires_at) && DateTime.lessThanOrEqualTo(found.value.expires_at.value, now)) {
        return yield* rejected
      }
      const user = yield* accounts.findUser(found.value.user_id)
      if (Option.isNone(user)) return yield* rejected
      const memberships = yield* accounts.membershipsOf(user.value.id)
      const principal: Principal = { user: user.value, memberships }
      return principal
    })

    /** Stores a token for a user (fixtures, sign-in flows). */
    const issue = Effect.fn("Identity.issue")(function*(
      userId: Principal["user"]["id"],
      token: string,
      expiresAt: Option.Option<DateTime.Utc> = Option.none()
    ) {
      const hash = yield* hashToken(token)
      const now = yield* DateTime.now
      yield* tokens.add({ hash, user_id: userId, expires_at: expiresAt, now })
    })

    return { authenticate, issue } as const
  })
}) {}
