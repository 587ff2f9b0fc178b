/**
 * Who is calling: the authenticated user and the accounts they belong to.
 */
import { Context, Option } from "effect"
import type { Membership, User } from "./Account.js"
import type { AccountId } from "./Ids.js"
import type { Scope } from "./Token.js"

/**
 * An authenticated caller, with memberships loaded at authentication time.
 * A token limited to some accounts carries only those memberships; a token
 * limited to some scopes names them in `scopes` (absent: every scope).
 */
export interface Principal {
  readonly user: User
  readonly memberships: ReadonlyArray<Membership>
  readonly scopes?: ReadonlyArray<Scope> | undefined
  /** The accounts a token limited to some may reach (absent: every account of the user). */
  readonly accounts?: ReadonlyArray<AccountId> | undefined
}

/** Whether the principal's credential may reach an account (a token limited to some accounts reaches only those). */
export const reaches = (principal: Principal, accountId: AccountId): boolean =>
  principal.accounts === undefined || principal.accounts.includes(accountId)

/** Whether the principal's credential may act within `scope`. */
export const allows = (principal: Principal, scope: Scope): boolean =>
  principal.scopes === undefined || principal.scopes.includes(scope)

/** The role the principal has in an account, if any. */
export const membershipIn = (principal: Principal, accountId: AccountId): Option.Option<Membership> =>
  Option.fromNullable(principal.memberships.find((m) => m.account_id === accountId))

/** The authenticated caller of the current request; provided by the HTTP layer. */
export class CurrentPrincipal extends Context.Tag("@hosting/core/CurrentPrincipal")<CurrentPrincipal, Principal>() {}
