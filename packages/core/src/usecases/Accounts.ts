/**
 * Account use cases: the caller's profile, an account's details, rename,
 * creating an account, and its members.
 */
import { DateTime, Effect, Option } from "effect"
import type { Member } from "../model/Account.js"
import { AccountExists, AccountNameTaken, AccountNotFound, LastOwner, MemberNotFound, UserNotFound } from "../model/Errors.js"
import { EventBus } from "../ports/EventBus.js"
import { AccountId, type AccountName, type Role, type UserId } from "../model/Ids.js"
import { orFail } from "../internal/lookup.js"
import * as Policy from "../model/Policy.js"
import { AccountStore, IdGenerator, Transactor } from "../ports/Ports.js"
import * as Principal from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"

export class Accounts extends Effect.Service<Accounts>()("@hosting/core/Accounts", {
  effect: Effect.gen(function*() {
    const store = yield* AccountStore
    const tx = yield* Transactor
    const bus = yield* EventBus
    const ids = yield* IdGenerator

    const named = (name: AccountName) => store.findByName(name).pipe(orFail(() => new AccountNotFound({ account: name })))

    /** The caller and the accounts they belong to, with their role in each. */
    const me = Tracing.fn("Accounts.me")(function*(principal: Principal.Principal) {
      const memberships = (yield* store.membershipsOf(principal.user.id)).filter((m) => Principal.reaches(principal, m.account_id))
      return {
        user: { id: principal.user.id, name: principal.user.name },
        accounts: memberships.map((m) => ({ name: m.account, role: m.role }))
      }
    })

    /** An account with its members; members only. */
    const get = Tracing.fn("Accounts.get")(function*(principal: Principal.Principal, name: AccountName) {
      const account = yield* named(name)
      const membership = yield* Policy.requireMember(principal, account, "reading the account")
      const members = yield* store.membersOf(account.id)
      return { name: account.name, created_at: account.created_at, role: membership.role, members }
    })

    /** Renames an account (owner or admin). Renaming to the current name changes nothing. */
    const rename = Tracing.fn("Accounts.rename")(function*(principal: Principal.Principal, name: AccountName, newName: AccountName) {
      const result = yield* tx.withTransaction(Effect.gen(function*() {
        const account = yield* named(name)
        yield* Policy.requireManager(principal, account, "renaming the account")
        if (account.name !== newName) {
          const renamed = yield* store.rename(account.id, newName)
          if (!renamed) return yield* new AccountNameTaken({ name: newName })
        }
        return { id: account.id, previous: account.name, name: newName }
      }))
      // Wakes whatever keeps pages of the account by its name (the public agent cache); streams find no new event.
      if (result.previous !== newName) yield* bus.publish([result.id])
      return { previous: result.previous, name: result.name }
    })

    /** Creates an account; the caller becomes its owner. */
    const create = Tracing.fn("Accounts.create")(function*(principal: Principal.Principal, name: AccountName) {
      const id = AccountId.make(yield* ids.next)
      const now = yield* DateTime.now
      return yield* tx.withTransaction(Effect.gen(function*() {
        const created = yield* store.create({ id, name, now })
        if (Option.isNone(created)) return yield* new AccountExists({ name })
        yield* store.setMembership(created.value.id, principal.user.id, "owner")
        return { name: created.value.name, created_at: created.value.created_at, role: "owner" as const }
      }))
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

    /**
     * Gives a user a role in an account, adding them when they are not a
     * member (Policy.roleChangeRefusal says who may); the last owner keeps
     * the role owner. Giving a member the role they have changes nothing.
     */
    const setRole = Tracing.fn("Accounts.setRole")(function*(principal: Principal.Principal, name: AccountName, user: UserId, role: Role) {
      return yield* tx.withTransaction(Effect.gen(function*() {
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
        if (Option.isNone(current) || current.value.role !== role) yield* store.setMembership(account.id, user, role)
        return { user_id: user, name: found.value.name, role, added: Option.isNone(current) }
      }))
    })

    /** Removes a member from an account (Policy.removalRefusal says who may); the last owner stays. */
    const removeMember = Tracing.fn("Accounts.removeMember")(function*(principal: Principal.Principal, name: AccountName, user: UserId) {
      return yield* tx.withTransaction(Effect.gen(function*() {
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
        return { user_id: user, role: member.role }
      }))
    })

    return { me, get, rename, create, members, setRole, removeMember } as const
  })
}) {}
