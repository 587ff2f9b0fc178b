/**
 * Sign-in through an OpenID provider: the identity the provider vouched for
 * (its issuer and the user's `sub`) is linked to one user of ours, made on
 * the first sign-in (just in time) from the ID token's claims. The protocol
 * itself (discovery, PKCE, the code exchange, the ID token's checks) is the
 * HTTP side's; this use case only sees verified claims.
 */
import { DateTime, Effect, Option } from "effect"
import { UserId } from "../model/Ids.js"
import { AccountStore, Transactor } from "../ports/Ports.js"
import * as Tracing from "../runtime/Tracing.js"
import { DeviceAuth } from "./DeviceAuth.js"

/** What the provider said about the user, once the ID token was verified. */
export interface VerifiedClaims {
  readonly issuer: string
  readonly subject: string
  readonly email?: string | undefined
  readonly name?: string | undefined
  readonly preferred_username?: string | undefined
}

/** The characters a user id may hold, and its length. */
const idCharacters = /[^A-Za-z0-9._@-]+/g
const maxIdLength = 100

/**
 * The user id proposed for a new user: the preferred username, else the
 * email, else `sso-<sub>`, cut to what user ids allow.
 */
export const proposedUserId = (claims: VerifiedClaims): string => {
  const source = claims.preferred_username ?? claims.email ?? `sso-${claims.subject}`
  const cleaned = source.replace(idCharacters, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, maxIdLength)
  return cleaned === "" ? "sso-user" : cleaned
}

export class SingleSignOn extends Effect.Service<SingleSignOn>()("@hosting/core/SingleSignOn", {
  effect: Effect.gen(function*() {
    const accounts = yield* AccountStore
    const tx = yield* Transactor
    const auth = yield* DeviceAuth

    /** A user id nobody has: the proposal, else the proposal with `-2`, `-3`, ... */
    const freeUserId = Effect.fnUntraced(function*(proposal: string) {
      for (let n = 1; n <= 1000; n++) {
        const candidate = UserId.make(n === 1 ? proposal : `${proposal.slice(0, maxIdLength - 6)}-${n}`)
        if (Option.isNone(yield* accounts.findUser(candidate))) return candidate
      }
      return UserId.make(`sso-${globalThis.crypto.randomUUID()}`)
    })

    /** The user of the claims, linked (and made) in the caller's transaction when needed. */
    const linkedUser = Effect.fnUntraced(function*(claims: VerifiedClaims) {
      const linked = yield* accounts.findIdentity(claims.issuer, claims.subject)
      if (Option.isSome(linked)) return { user_id: linked.value, created: false }
      const id = yield* freeUserId(proposedUserId(claims))
      const now = yield* DateTime.now
      yield* accounts.addUser({ id, name: claims.name ?? claims.email ?? id, instance_admin: false, now })
      yield* accounts.linkIdentity({
        issuer: claims.issuer,
        subject: claims.subject,
        user_id: id,
        email: Option.fromNullable(claims.email),
        now
      })
      return { user_id: id, created: true }
    })

    /**
     * The user of verified claims: the one linked to the identity, else a new
     * user (named by `name`, else the email, else the user id), linked in the
     * same transaction. `created` says which.
     */
    const userOf = Tracing.fn("SingleSignOn.userOf")(function*(claims: VerifiedClaims) {
      return yield* tx.withTransaction(linkedUser(claims))
    })

    /** Signs the user of verified claims in: a browser session for them (made first, on their first sign-in). */
    const signIn = Tracing.fn("SingleSignOn.signIn")(function*(claims: VerifiedClaims) {
      const user = yield* userOf(claims)
      const session = yield* auth.sessionFor(user.user_id)
      return { ...session, created: user.created }
    })

    return { userOf, signIn } as const
  })
}) {}
