import { Context, type DateTime, Effect, type Option } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { Principal } from "../model/Principal.js"
import type { AccountId, UserId } from "../model/Ids.js"
import type { Scope } from "../model/Token.js"

/** What a personal access token is, besides its secret: its name, reach and use. */
export interface PersonalToken {
  readonly id: string
  readonly name: string
  /** None: every scope. */
  readonly scopes: Option.Option<ReadonlyArray<Scope>>
  /** None: every account of its user. */
  readonly accounts: Option.Option<ReadonlyArray<AccountId>>
  readonly created_at: DateTime.Utc
  readonly expires_at: Option.Option<DateTime.Utc>
  readonly last_used_at: Option.Option<DateTime.Utc>
}

/** The limits a token was made with (none of either: the user's full access). */
export interface TokenLimits {
  /** Set for a personal access token: the id users know it by. */
  readonly id: Option.Option<string>
  readonly scopes: Option.Option<ReadonlyArray<Scope>>
  readonly accounts: Option.Option<ReadonlyArray<AccountId>>
}

/** Bearer tokens, stored only as SHA-256 hashes. */
export class TokenStore extends Context.Tag("@hosting/core/TokenStore")<TokenStore, {
  /**
   * What authentication needs of a token hash, in one read: the token's
   * expiry (none: it does not expire) and its user with their memberships
   * (by account name). None when the hash, or the user it belongs to, is
   * unknown. The principal has every membership of the user; `limits`
   * say what the token itself may reach.
   */
  readonly findPrincipal: (hash: string) => Effect.Effect<
    Option.Option<{
      readonly hash: string
      readonly expires_at: Option.Option<DateTime.Utc>
      readonly principal: Principal
      readonly limits: TokenLimits
    }>,
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
    /** A personal access token: the id and name its user knows it by. */
    readonly personal?: { readonly id: string; readonly name: string } | undefined
    /**
     * What the token may reach. Not given: a token made from another has
     * that one's limits (a session signed in with a limited token is as
     * limited), any other has none.
     */
    readonly limits?: {
      readonly scopes: Option.Option<ReadonlyArray<Scope>>
      readonly accounts: Option.Option<ReadonlyArray<AccountId>>
    } | undefined
  }) => Effect.Effect<boolean, StorageError>
  /** The personal access tokens of a user, newest first. */
  readonly listPersonal: (userId: UserId) => Effect.Effect<ReadonlyArray<PersonalToken>, StorageError>
  /**
   * Revokes a personal access token of a user (as `remove` does), and
   * answers what it was (its name and accounts); none when the user has
   * none with that id.
   */
  readonly removePersonal: (
    userId: UserId,
    id: string
  ) => Effect.Effect<Option.Option<Pick<PersonalToken, "name" | "accounts">>, StorageError>
  /** Records that a token was used at `now`. */
  readonly touch: (hash: string, now: DateTime.Utc) => Effect.Effect<void, StorageError>
  /**
   * Forgets a token (revocation), and with it every token made from it,
   * transitively, and the device logins decided with it; `false` when there
   * was none with that hash.
   */
  readonly remove: (hash: string) => Effect.Effect<boolean, StorageError>
}>() {}
