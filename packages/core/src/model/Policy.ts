/**
 * Who may do what. Every membership, role and ownership rule of the contract
 * lives here, so that handlers and use cases never write their own checks.
 * A rule that a hot path asks is a plain function (a boolean, or the
 * refusal as an `Option`); the use case fails with what it gives.
 */
import { Effect, Option } from "effect"
import type { Account, Membership } from "./Account.js"
import { AccountNotFound, DeploymentNotFound, PermissionDenied } from "./Errors.js"
import type { AccountId, AccountName, AgentName, Role, UserId } from "./Ids.js"
import { membershipIn, type Principal } from "./Principal.js"

/** Roles that may register, publish, rename and deploy. */
export const managerRoles: ReadonlyArray<Role> = ["owner", "admin"]

/** True when the principal is a member (any role) of the account with this id. */
export const isMemberOf = (principal: Principal, accountId: AccountId): boolean =>
  principal.memberships.some((m) => m.account_id === accountId)

/** True when the principal is a member (any role) of the account the name names, as a path names it (before the account is read). */
export const isMemberByName = (principal: Principal, accountName: string): boolean =>
  principal.memberships.some((m) => m.account === accountName)

/**
 * The id of the account the name names when the principal is a member of it,
 * from the memberships read with the principal (as fresh as the principal:
 * see PrincipalCache); undefined otherwise, and the account must be read.
 */
export const memberAccountIdByName = (principal: Principal, accountName: string): AccountId | undefined =>
  principal.memberships.find((m) => m.account === accountName)?.account_id

/** True when the principal is a member (any role) of the account; an anonymous caller is a member of none. */
export const isMember = (principal: Option.Option<Principal>, account: Account): boolean =>
  Option.isSome(principal) && isMemberOf(principal.value, account.id)

/** The accounts the principal belongs to: whose deployments and traces of an agent the principal sees. */
export const memberAccounts = (principal: Principal): ReadonlyArray<AccountId> => principal.memberships.map((m) => m.account_id)

const allRoles: ReadonlyArray<Role> = ["owner", "admin", "member"]

const needs = (roles: ReadonlyArray<Role>) =>
  roles.length === allRoles.length ? "membership" : `the role ${roles.join(" or ")}`

/**
 * The refusal given to a caller who is not a member of an account (or names
 * one that does not exist, which has no members): 403, with what the action
 * needs when it is named.
 */
export const notMember = (account: AccountName, action?: string, needing = "membership"): PermissionDenied =>
  new PermissionDenied({
    details: action === undefined
      ? `You are not a member of account ${account}.`
      : `You are not a member of account ${account}; ${action} needs ${needing}.`
  })

/**
 * Having one of the roles in the account: the membership, or the refusal
 * (403: not a member, or a member with another role).
 */
export const roleIn = (
  principal: Principal,
  account: Account,
  roles: ReadonlyArray<Role>,
  action: string
): RoleDecision => {
  const membership = membershipIn(principal, account.id)
  if (Option.isNone(membership)) return { ok: false, refusal: notMember(account.name, action, needs(roles)) }
  if (roles.includes(membership.value.role)) return { ok: true, membership: membership.value }
  return {
    ok: false,
    refusal: new PermissionDenied({
      details: `Your role in account ${account.name} is ${membership.value.role}; ${action} needs ${needs(roles)}.`
    })
  }
}

/** What `roleIn` decides: the membership that allows, or the refusal. */
export type RoleDecision =
  | { readonly ok: true; readonly membership: Membership }
  | { readonly ok: false; readonly refusal: PermissionDenied }

/** Succeeds with the membership when the principal has one of the roles in the account (403 otherwise). */
export const requireRole = (
  principal: Principal,
  account: Account,
  roles: ReadonlyArray<Role>,
  action: string
): Effect.Effect<Membership, PermissionDenied> => {
  const decided = roleIn(principal, account, roles, action)
  return decided.ok ? Effect.succeed(decided.membership) : Effect.fail(decided.refusal)
}

/** Register, publish, rename, deploy, undeploy: owner or admin of the account. */
export const requireManager = (principal: Principal, account: Account, action: string) =>
  requireRole(principal, account, managerRoles, action)

/** Deleting the account: its owners only. */
export const requireOwner = (principal: Principal, account: Account, action: string) =>
  requireRole(principal, account, ["owner"], action)

/** Account-scoped reads (the account, its event stream, its namespaces' ConfigMaps and pods): any member. */
export const requireMember = (principal: Principal, account: Account, action: string) =>
  requireRole(principal, account, allRoles, action)

/**
 * The values of an agent's `env` (in deployment views and in its
 * ConfigMap): shown to members of the agent's account, hidden from others.
 */
export const seesAgentEnv = (principal: Principal, publisherId: AccountId): boolean => isMemberOf(principal, publisherId)

/**
 * The values of a deployment's own env (what its deploy set over the
 * spec's): shown to members of the deploying account, hidden from others.
 */
export const seesDeploymentEnv = (principal: Principal, accountId: AccountId): boolean => isMemberOf(principal, accountId)

/**
 * An account's secrets: members list their names, owners and admins set
 * and delete them; to anyone else the account has none to show (404, the
 * answer for an account that does not exist), so that a secret's name never
 * reaches outside its account.
 */
export const secretsRefusal = (
  principal: Principal,
  account: Account,
  manage: boolean
): Option.Option<AccountNotFound | PermissionDenied> => {
  if (!isMemberOf(principal, account.id)) return Option.some(new AccountNotFound({ account: account.name }))
  if (!manage) return Option.none()
  const decided = roleIn(principal, account, managerRoles, "setting or deleting its secrets")
  return decided.ok ? Option.none() : Option.some(decided.refusal)
}

/** A deployment as the rules below see it: the deploying account, by id and name. */
export interface DeploymentOfAccount {
  readonly account_id: AccountId
  readonly account: AccountName
}

/** Chatting with a deployment: members of the deploying account; anyone else is refused (403). */
export const chatRefusal = (principal: Principal, deployment: DeploymentOfAccount): Option.Option<PermissionDenied> =>
  isMemberOf(principal, deployment.account_id)
    ? Option.none()
    : Option.some(new PermissionDenied({ details: `Only members of ${deployment.account} may chat with its deployments.` }))

/** Using a deployment's files: members of the deploying account; anyone else is refused (403). */
export const filesRefusal = (principal: Principal, deployment: DeploymentOfAccount): Option.Option<PermissionDenied> =>
  isMemberOf(principal, deployment.account_id)
    ? Option.none()
    : Option.some(new PermissionDenied({ details: `Only members of ${deployment.account} may use its deployments' files.` }))

/**
 * Reading or ending one deployment: members of the deploying account read
 * it and anyone else finds it not found (404); ending it (`manage`) needs
 * owner or admin (403).
 */
export const deploymentRefusal = (
  principal: Principal,
  account: Account,
  deployment: string,
  manage: boolean,
  action = "undeploying"
): Option.Option<DeploymentNotFound | PermissionDenied> => {
  if (!isMemberOf(principal, account.id)) return Option.some(new DeploymentNotFound({ deployment }))
  if (!manage) return Option.none()
  const decided = roleIn(principal, account, managerRoles, action)
  return decided.ok ? Option.none() : Option.some(decided.refusal)
}

/**
 * An agent's deployment history and traces: members of the agent's account,
 * and members of an account that deploys it (`deployedByTheirs`), may read
 * them (each sees what concerns their own accounts).
 */
export const readsAgentActivity = (principal: Principal, publisherId: AccountId, deployedByTheirs: boolean): boolean =>
  deployedByTheirs || isMemberOf(principal, publisherId)

/**
 * The refusal (403) when `readsAgentActivity` is false, or when the agent's
 * account does not exist: `what` is "deployments" or "traces".
 */
export const agentActivityRefused = (account: AccountName, name: AgentName, what: "deployments" | "traces"): PermissionDenied =>
  new PermissionDenied({
    details: `Only members of ${account} or of an account that deploys ${account}/${name} may read its ${what}.`
  })

/** Exporting traces of an agent over OTLP: members of the agent's account. */
export const exportsTraces = (principal: Principal, publisherId: AccountId): boolean => isMemberOf(principal, publisherId)

/** The refusal (403) when `exportsTraces` is false, or the account the export names does not exist. */
export const traceExportRefused = (account: string, agent: string): PermissionDenied =>
  new PermissionDenied({ details: `Only members of ${account} may export traces of ${account}/${agent}.` })

/**
 * A namespace reached through an account (ConfigMap read, pod restart): it
 * must hold a deployment of that account; otherwise the refusal (403).
 */
export const namespaceRefusal = (
  deployment: { readonly account_id: AccountId },
  namespace: string,
  account: Account
): Option.Option<PermissionDenied> =>
  deployment.account_id === account.id
    ? Option.none()
    : Option.some(new PermissionDenied({ details: `Namespace ${namespace} does not belong to account ${account.name}.` }))

/**
 * A user's conversations and files are theirs alone: true when the principal is the owner.
 * To anyone else the use cases answer as if the record did not exist (not
 * found; an attachment of someone else's file is invalid).
 */
export const owns = (principal: Principal, ownerId: UserId): boolean => ownerId === principal.user.id

/**
 * Giving a user a role in an account (adding them, or changing their role):
 * owners give any role to anyone; admins manage members, so they may only
 * add members or leave a member a member; anyone else is refused (403).
 * `current` is the user's role now, none when they are not a member yet.
 */
export const roleChangeRefusal = (
  principal: Principal,
  account: Account,
  current: Option.Option<Role>,
  role: Role
): Option.Option<PermissionDenied> => {
  const decided = roleIn(principal, account, managerRoles, "managing members")
  if (!decided.ok) return Option.some(decided.refusal)
  if (decided.membership.role === "owner") return Option.none()
  if (role === "member" && Option.getOrElse(current, () => "member") === "member") return Option.none()
  return Option.some(
    new PermissionDenied({
      details: `Admins of ${account.name} manage members only; giving or changing the role ${
        Option.isSome(current) && current.value !== "member" ? current.value : role
      } needs the role owner.`
    })
  )
}

/**
 * Removing a member whose role is `role` from an account: a member may
 * remove themself, owners remove anyone and admins remove members; anyone
 * else is refused (403).
 */
export const removalRefusal = (
  principal: Principal,
  account: Account,
  user: UserId,
  role: Role
): Option.Option<PermissionDenied> => {
  if (user === principal.user.id && isMemberOf(principal, account.id)) return Option.none()
  const decided = roleIn(principal, account, managerRoles, "removing members")
  if (!decided.ok) return Option.some(decided.refusal)
  if (decided.membership.role === "owner" || role === "member") return Option.none()
  return Option.some(new PermissionDenied({ details: `Admins of ${account.name} remove members only; removing an ${role} needs the role owner.` }))
}
