/**
 * Account use cases: the caller's profile, an account's details, rename,
 * creating an account, and its members.
 */
import { DateTime, Duration, Effect, Option } from "effect"
import type { Account, Member } from "../model/Account.js"
import {
  AccountExists,
  AccountNameTaken,
  AccountBusy,
  AccountNotFound,
  AlreadyMember,
  InvitationNotFound,
  LastOwner,
  MemberNotFound,
  UserNotFound
} from "../model/Errors.js"
import * as Audit from "../model/Audit.js"
import * as Token from "../model/Token.js"
import { audit } from "../internal/audit.js"
import { hashToken } from "./Identity.js"
import { EventBus } from "../ports/EventBus.js"
import { AccountId, type AccountName, type Role, type UserId } from "../model/Ids.js"
import { orFail } from "../internal/lookup.js"
import * as Policy from "../model/Policy.js"
import { AccountStore, IdGenerator, type Invitation, Transactor } from "../ports/Ports.js"
import { ObjectStore } from "../ports/ObjectStore.js"
import { DeploymentId } from "../model/Deployment.js"
import * as Files from "./Files.js"
import * as Principal from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"

/** How long an invitation waits for its invitee. */
export const invitationLifetime = Duration.days(7)

export class Accounts extends Effect.Service<Accounts>()("@hosting/core/Accounts", {
  effect: Effect.gen(function*() {
    const store = yield* AccountStore
    const tx = yield* Transactor
    const bus = yield* EventBus
    const ids = yield* IdGenerator
    const objects = yield* ObjectStore

    const named = (name: AccountName) => store.findByName(name).pipe(orFail(() => new AccountNotFound({ account: name })))

    /**
     * The caller and the accounts they belong to, with their role in each:
     * the memberships the principal was authenticated with (read with its
     * token, by account name, and narrowed to what a limited token reaches),
     * as every authorization of the same request sees them.
     */
    const me = (principal: Principal.Principal) =>
      Effect.succeed({
        user: { id: principal.user.id, name: principal.user.name },
        accounts: principal.memberships.map((m) => ({ name: m.account, role: m.role }))
      })

    /** An account with its members; members only. */
    const get = Tracing.fn("Accounts.get")(function*(principal: Principal.Principal, name: AccountName) {
      const account = yield* named(name)
      const membership = yield* Policy.requireMember(principal, account, "reading the account")
      const members = yield* store.membersOf(account.id)
      return { name: account.name, created_at: account.created_at, role: membership.role, members }
    })

    /** Renames the account, with its audit entry (in the caller's transaction). */
    const renameAccount = Effect.fnUntraced(function*(principal: Principal.Principal, name: AccountName, newName: AccountName) {
      const account = yield* named(name)
      yield* Policy.requireManager(principal, account, "renaming the account")
      if (account.name !== newName) {
        const renamed = yield* store.rename(account.id, newName)
        if (!renamed) return yield* new AccountNameTaken({ name: newName })
        yield* audit(store, principal, [account.id], "account.renamed", newName, `Renamed ${account.name} to ${newName}.`)
      }
      return { id: account.id, previous: account.name, name: newName }
    })

    /** Renames an account (owner or admin). Renaming to the current name changes nothing. */
    const rename = Tracing.fn("Accounts.rename")(function*(principal: Principal.Principal, name: AccountName, newName: AccountName) {
      const result = yield* tx.withTransaction(renameAccount(principal, name, newName))
      // Wakes whatever keeps pages of the account by its name (the public agent cache); streams find no new event.
      if (result.previous !== newName) yield* bus.publish([result.id])
      return { previous: result.previous, name: result.name }
    })

    /** Creates the account with the caller as its owner, with its audit entry (in the caller's transaction). */
    const createAccount = Effect.fnUntraced(function*(principal: Principal.Principal, id: AccountId, name: AccountName, now: DateTime.Utc) {
      const created = yield* store.create({ id, name, now })
      if (Option.isNone(created)) return yield* new AccountExists({ name })
      yield* store.setMembership(created.value.id, principal.user.id, "owner")
      yield* audit(store, principal, [created.value.id], "account.created", name, `Created ${name}; ${principal.user.id} is its owner.`)
      return { name: created.value.name, created_at: created.value.created_at, role: "owner" as const }
    })

    /** Creates an account; the caller becomes its owner. */
    const create = Tracing.fn("Accounts.create")(function*(principal: Principal.Principal, name: AccountName) {
      const id = AccountId.make(yield* ids.next)
      const now = yield* DateTime.now
      return yield* tx.withTransaction(createAccount(principal, id, name, now))
    })

    /** The members of an account, with their roles; members only. */
    const members = Tracing.fn("Accounts.members")(function*(principal: Principal.Principal, name: AccountName) {
      const account = yield* named(name)
      yield* Policy.requireMember(principal, account, "listing its members")
      return yield* store.membersOf(account.id)
    })

    /** Fails with `LastOwner` when `members` has no owner but `user`. */
    const keepAnOwner = (members: ReadonlyArray<Member>, account: AccountName, user: UserId) =>
      members.some((m) => m.role === "owner" && m.user_id !== user)
        ? Effect.void
        : Effect.fail(new LastOwner({ account, user }))

    /** Gives the user the role, with its audit entry (in the caller's transaction). */
    const storeRole = Effect.fnUntraced(function*(principal: Principal.Principal, name: AccountName, user: UserId, role: Role) {
      const account = yield* named(name)
      yield* Policy.requireManager(principal, account, "managing members")
      const found = yield* store.findUser(user)
      if (Option.isNone(found)) return yield* new UserNotFound({ user })
      yield* store.lockMembers(account.id)
      const members = yield* store.membersOf(account.id)
      const current = Option.fromNullable(members.find((m) => m.user_id === user))
      const refused = Policy.roleChangeRefusal(principal, account, Option.map(current, (m) => m.role), role)
      if (Option.isSome(refused)) return yield* refused.value
      if (Option.isSome(current) && current.value.role === "owner" && role !== "owner") {
        yield* keepAnOwner(members, account.name, user)
      }
      if (Option.isNone(current) || current.value.role !== role) {
        yield* store.setMembership(account.id, user, role)
        yield* Option.match(current, {
          onNone: () => audit(store, principal, [account.id], "member.added", user, `Added ${user} as ${role}.`),
          onSome: (was) =>
            audit(store, principal, [account.id], "member.role_changed", user, `Changed ${user} from ${was.role} to ${role}.`)
        })
      }
      return { user_id: user, name: found.value.name, role, added: Option.isNone(current) }
    })

    /**
     * Gives a user a role in an account, adding them when they are not a
     * member (Policy.roleChangeRefusal says who may); the last owner keeps
     * the role owner. Giving a member the role they have changes nothing.
     */
    const setRole = Tracing.fn("Accounts.setRole")(function*(principal: Principal.Principal, name: AccountName, user: UserId, role: Role) {
      return yield* tx.withTransaction(storeRole(principal, name, user, role))
    })

    /** Removes the member, with its audit entry (in the caller's transaction). */
    const storeRemoval = Effect.fnUntraced(function*(principal: Principal.Principal, name: AccountName, user: UserId) {
      const account = yield* named(name)
      yield* Policy.requireMember(principal, account, "managing members")
      yield* store.lockMembers(account.id)
      const members = yield* store.membersOf(account.id)
      const member = members.find((m) => m.user_id === user)
      if (member === undefined) return yield* new MemberNotFound({ account: account.name, user })
      const refused = Policy.removalRefusal(principal, account, user, member.role)
      if (Option.isSome(refused)) return yield* refused.value
      if (member.role === "owner") yield* keepAnOwner(members, account.name, user)
      yield* store.removeMembership(account.id, user)
      yield* audit(
        store,
        principal,
        [account.id],
        "member.removed",
        user,
        user === principal.user.id ? `${user} (${member.role}) left.` : `Removed ${user} (${member.role}).`
      )
      return { user_id: user, role: member.role }
    })

    /** Removes a member from an account (Policy.removalRefusal says who may); the last owner stays. */
    const removeMember = Tracing.fn("Accounts.removeMember")(function*(principal: Principal.Principal, name: AccountName, user: UserId) {
      return yield* tx.withTransaction(storeRemoval(principal, name, user))
    })

    /** The view of an invitation (never its code: only the answer that made it shows that). */
    const invitationView = (account: AccountName, i: Invitation) => ({
      id: i.id,
      account,
      email: Option.getOrNull(i.email),
      role: i.role,
      created_by: i.created_by,
      created_at: i.created_at,
      expires_at: i.expires_at
    })

    /**
     * Invites someone to an account with a role: a one-time code that any
     * signed-in user may accept before it expires. Who may invite with which
     * role is who may give it (owners any role, admins members).
     */
    const invite = Tracing.fn("Accounts.invite")(function*(
      principal: Principal.Principal,
      name: AccountName,
      input: { readonly role: Role; readonly email?: string | undefined }
    ) {
      const account = yield* named(name)
      const refused = Policy.roleChangeRefusal(principal, account, Option.none(), input.role)
      if (Option.isSome(refused)) return yield* refused.value
      const code = Token.newInvitationCode()
      const now = yield* DateTime.now
      const invitation: Invitation = {
        id: yield* ids.next,
        account_id: account.id,
        code_hash: yield* hashToken(code),
        email: Option.fromNullable(input.email),
        role: input.role,
        created_by: principal.user.id,
        created_at: now,
        expires_at: DateTime.addDuration(now, invitationLifetime)
      }
      yield* tx.withTransaction(Effect.zipRight(
        store.addInvitation(invitation),
        audit(
          store,
          principal,
          [account.id],
          "invitation.created",
          input.email ?? invitation.id,
          `Invited ${input.email ?? "someone"} as ${input.role} (invitation ${invitation.id}).`
        )
      ))
      return { ...invitationView(account.name, invitation), code }
    })

    /** The invitations of an account still waiting (owners and admins). */
    const invitations = Tracing.fn("Accounts.invitations")(function*(principal: Principal.Principal, name: AccountName) {
      const account = yield* named(name)
      yield* Policy.requireManager(principal, account, "listing its invitations")
      const waiting = yield* store.invitationsOf(account.id, yield* DateTime.now)
      return waiting.map((i) => invitationView(account.name, i))
    })

    /** Removes the invitation, with its audit entry (in the caller's transaction). */
    const withdrawInvitation = Effect.fnUntraced(function*(principal: Principal.Principal, account: Account, id: string) {
      if (!(yield* store.removeInvitation(account.id, id))) return yield* new InvitationNotFound()
      yield* audit(store, principal, [account.id], "invitation.withdrawn", id, `Withdrew invitation ${id}.`)
    })

    /** Withdraws an invitation (owners and admins); 404 when none waits with that id. */
    const withdraw = Tracing.fn("Accounts.withdraw")(function*(principal: Principal.Principal, name: AccountName, id: string) {
      const account = yield* named(name)
      yield* Policy.requireManager(principal, account, "withdrawing its invitations")
      yield* tx.withTransaction(withdrawInvitation(principal, account, id))
      return { message: `Invitation ${id} to ${account.name} withdrawn.`, id }
    })

    /** Spends the invitation and adds the caller to its account, with its audit entry (in the caller's transaction). */
    const acceptInvitation = Effect.fnUntraced(function*(principal: Principal.Principal, hash: string, now: DateTime.Utc) {
      const taken = yield* store.takeInvitation(hash, now)
      if (Option.isNone(taken)) return yield* new InvitationNotFound()
      const invitation = taken.value
      const account = yield* store.findById(invitation.account_id).pipe(orFail(() => new InvitationNotFound()))
      yield* store.lockMembers(account.id)
      const members = yield* store.membersOf(account.id)
      const current = members.find((m) => m.user_id === principal.user.id)
      if (current !== undefined) return yield* new AlreadyMember({ account: account.name, role: current.role })
      yield* store.setMembership(account.id, principal.user.id, invitation.role)
      yield* audit(
        store,
        principal,
        [account.id],
        "invitation.accepted",
        principal.user.id,
        `${principal.user.id} joined as ${invitation.role} (invitation ${invitation.id} by ${invitation.created_by}).`
      )
      return { account: account.name, role: invitation.role }
    })

    /**
     * Accepts an invitation by its code: the caller joins its account with
     * its role, and the code is spent. A member of the account already is
     * refused (409) and the invitation stays.
     */
    const accept = Tracing.fn("Accounts.accept")(function*(principal: Principal.Principal, code: string) {
      const hash = yield* hashToken(code)
      const now = yield* DateTime.now
      return yield* tx.withTransaction(acceptInvitation(principal, hash, now))
    })

    /** A page of the account's audit log, newest first (owners and admins). */
    const auditLog = Tracing.fn("Accounts.auditLog")(function*(
      principal: Principal.Principal,
      name: AccountName,
      page: { readonly limit?: number | undefined; readonly offset?: number | undefined }
    ) {
      const account = yield* named(name)
      yield* Policy.requireManager(principal, account, "reading its audit log")
      const limit = page.limit ?? Audit.defaultPageSize
      const offset = page.offset ?? 0
      const found = yield* store.auditOf(account.id, { limit, offset })
      return {
        entries: found.entries.map((e) => ({ id: e.id, at: e.at, actor: e.actor, action: e.action, target: e.target, details: e.details })),
        total: found.total,
        limit,
        offset
      }
    })

    /** Deletes the account once nothing of it runs (in the caller's transaction); the files whose objects are left to remove. */
    const removeAccount = Effect.fnUntraced(function*(principal: Principal.Principal, name: AccountName) {
      const account = yield* named(name)
      yield* Policy.requireOwner(principal, account, "deleting the account")
      yield* store.lockMembers(account.id)
      const live = yield* store.liveDeployments(account.id)
      if (live.length > 0) return yield* new AccountBusy({ account: account.name, deployments: live })
      const files = yield* store.deleteAccount(account.id).pipe(orFail(() => new AccountNotFound({ account: name })))
      return { files, id: account.id }
    })

    /**
     * Deletes an account and everything of it (AccountStore.deleteAccount),
     * by an owner, once nothing of it runs: no deployment by it, and none of
     * its agents by anyone (409 `account_busy` naming them). The stored
     * files' objects go after the transaction; one that cannot be removed is
     * logged and left (no record points at it any more).
     */
    const remove = Tracing.fn("Accounts.remove")(function*(principal: Principal.Principal, name: AccountName) {
      const { files, id } = yield* tx.withTransaction(removeAccount(principal, name))
      yield* Effect.forEach(files, (file) => {
        const ref = { deployment_id: DeploymentId.make(file.deployment_id), owner_id: file.owner_id, key: file.key }
        return objects.delete(file.ready ? Files.objectKey(ref) : Files.uploadKey(ref)).pipe(
          Effect.catchAll((error) => Effect.logWarning("could not remove the object of a deleted account's file", file.key, error))
        )
      }, { discard: true, concurrency: 4 })
      // Wakes what keeps pages of the account (the public agent cache); its streams find the account gone.
      yield* bus.publish([id])
      return { message: `Account ${name} deleted, with its agents, deployments, conversations and files.`, name }
    })

    return {
      me,
      get,
      rename,
      create,
      members,
      setRole,
      removeMember,
      invite,
      invitations,
      withdraw,
      accept,
      auditLog,
      remove
    } as const
  })
}) {}
