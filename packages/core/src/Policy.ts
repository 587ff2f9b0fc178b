/**
 * Who may do what. Every authorization rule of the contract lives here, so
 * that handlers and use cases never write their own role checks.
 */
import { Effect, Option } from "effect"
import type { Account, Membership } from "./Account.js"
import { PermissionDenied } from "./Errors.js"
import type { Role } from "./Ids.js"
import { membershipIn, type Principal } from "./Principal.js"

/** Roles that may register, publish, rename and deploy. */
export const managerRoles: ReadonlyArray<Role> = ["owner", "admin"]

/** True when the principal is a member (any role) of the account. */
export const isMember = (principal: Option.Option<Principal>, account: Account): boolean =>
  Option.isSome(Option.flatMap(principal, (p) => membershipIn(p, account.id)))

const needs = (roles: ReadonlyArray<Role>) =>
  roles.length === allRoles.length ? "membership" : `the role ${roles.join(" or ")}`

const allRoles: ReadonlyArray<Role> = ["owner", "admin", "member"]

/** Succeeds with the membership when the principal has one of the roles in the account. */
export const requireRole = (
  principal: Principal,
  account: Account,
  roles: ReadonlyArray<Role>,
  action: string
): Effect.Effect<Membership, PermissionDenied> =>
  Option.match(membershipIn(principal, account.id), {
    onNone: () =>
      Effect.fail(new PermissionDenied({ details: `You are not a member of account ${account.name}; ${action} needs ${needs(roles)}.` })),
    onSome: (membership) =>
      roles.includes(membership.role)
        ? Effect.succeed(membership)
        : Effect.fail(
          new PermissionDenied({
            details: `Your role in account ${account.name} is ${membership.role}; ${action} needs ${needs(roles)}.`
          })
        )
  })

/** Register, publish, rename: owner or admin of the account. */
export const requireManager = (principal: Principal, account: Account, action: string) =>
  requireRole(principal, account, managerRoles, action)

/** Account-scoped reads (event stream, deployments, ...): any member. */
export const requireMember = (principal: Principal, account: Account, action: string) =>
  requireRole(principal, account, allRoles, action)
