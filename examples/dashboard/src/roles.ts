/**
 * What the signed-in user may do to the members of an account, following
 * the server's rules (core `Policy.roleChangeRefusal` and `removalRefusal`):
 * owners give any role and remove anyone, admins add and remove members
 * only, and every member may leave. The pages offer only what these allow;
 * the server still decides, and its refusal is shown when it says no.
 */
import type { Ids } from "@hosting/core"

export type Role = Ids.Role

/** Every role, highest first (the order of the selects). */
export const roles: ReadonlyArray<Role> = ["owner", "admin", "member"]

/** Narrows a role as the session carries it (a plain string) to a `Role`. */
export const asRole = (value: string | undefined): Role | undefined => roles.find((role) => role === value)

/** True for the roles that manage an account (members, invitations, audit log). */
export const isManager = (role: Role | undefined) => role === "owner" || role === "admin"

/** What the caller may do to one member row. */
export interface MemberActions {
  /** The roles the caller may give this member; empty when the role cannot be changed from here. */
  readonly roles: ReadonlyArray<Role>
  /** "leave" for the caller's own row, "remove" for someone they may remove, else nothing. */
  readonly removal: "remove" | "leave" | undefined
}

/**
 * The actions on `member`'s row for a caller with role `mine`. Admins can
 * only leave a member a member, which changes nothing, so they get no role
 * choice at all.
 */
export const memberActions = (
  me: { readonly id: string; readonly role: Role | undefined },
  member: { readonly user_id: string; readonly role: Role }
): MemberActions => {
  const self = member.user_id === me.id
  const removes = me.role === "owner" || (me.role === "admin" && member.role === "member")
  return {
    roles: me.role === "owner" ? roles : [],
    removal: self ? "leave" : removes ? "remove" : undefined
  }
}

/** The roles the caller may invite with: owners any, admins member only, others none. */
export const inviteRoles = (mine: Role | undefined): ReadonlyArray<Role> =>
  mine === "owner" ? roles : mine === "admin" ? ["member"] : []
