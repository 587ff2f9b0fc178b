import { Context, type DateTime, Effect, type Option } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { Principal } from "../model/Principal.js"
import type { UserId } from "../model/Ids.js"

/** Bearer tokens, stored only as SHA-256 hashes. */
export class TokenStore extends Context.Tag("@hosting/core/TokenStore")<TokenStore, {
  /**
   * What authentication needs of a token hash, in one read: the token's
   * expiry (none: it does not expire) and its user with their memberships
   * (by account name). None when the hash, or the user it belongs to, is
   * unknown.
   */
  readonly findPrincipal: (hash: string) => Effect.Effect<
    Option.Option<{ readonly hash: string; readonly expires_at: Option.Option<DateTime.Utc>; readonly principal: Principal }>,
    StorageError
  >
  /**
   * Stores a token hash for a user; storing the same hash again changes
   * nothing. A token made from another credential (`parent_hash`: a
   * session signed in with a token, a device login approved in a session)
   * lives only as long as that one: it is stored only while the parent is,
   * and removed with it. `false` when the parent is gone (nothing stored).
   */
  readonly add: (input: {
    readonly hash: string
    readonly user_id: UserId
    readonly expires_at: Option.Option<DateTime.Utc>
    readonly parent_hash: Option.Option<string>
    readonly now: DateTime.Utc
  }) => Effect.Effect<boolean, StorageError>
  /**
   * Forgets a token (revocation), and with it every token made from it,
   * transitively, and the device logins decided with it; `false` when there
   * was none with that hash.
   */
  readonly remove: (hash: string) => Effect.Effect<boolean, StorageError>
}>() {}
