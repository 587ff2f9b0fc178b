/**
 * Who is calling: the authenticated user and the accounts they belong to.
 */
import { Context, Option } from "effect"
import type { Membership, User } from "./Account.js"
import type { AccountId } from "./Ids.js"

/** An authenticated caller, with memberships loaded at authentication time. */
export interface Principal {
  readonly user: User
  readonly memberships: ReadonlyArray<Membership>
}

/** The role the principal has in an account, if any. */
export const membershipIn = (principal: Principal, accountId: AccountId): Option.Option<Membership> =>
  Option.fromNullable(principal.memberships.find((m) => m.account_id === accountId))

/** The authenticated caller of the current request; provided by the HTTP layer. */
export class CurrentPrincipal extends Context.Tag("@hosting/core/CurrentPrincipal")<CurrentPrincipal, Principal>() {}
