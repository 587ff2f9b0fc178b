/**
 * Account use cases: the caller's profile, an account's details, rename.
 */
import { Effect } from "effect"
import { AccountNameTaken, AccountNotFound } from "../model/Errors.js"
import { EventBus } from "../ports/EventBus.js"
import type { AccountName } from "../model/Ids.js"
import { orFail } from "../internal/lookup.js"
import * as Policy from "../model/Policy.js"
import { AccountStore, Transactor } from "../ports/Ports.js"
import type { Principal } from "../model/Principal.js"
import * as Tracing from "../runtime/Tracing.js"

export class Accounts extends Effect.Service<Accounts>()("@hosting/core/Accounts", {
  effect: Effect.gen(function*() {
    const store = yield* AccountStore
    const tx = yield* Transactor
    const bus = yield* EventBus

    const named = (name: AccountName) => store.findByName(name).pipe(orFail(() => new AccountNotFound({ account: name })))

    /** The caller and the accounts they belong to, with their role in each. */
    const me = Tracing.fn("Accounts.me")(function*(principal: Principal) {
      const memberships = yield* store.membershipsOf(principal.user.id)
      return {
        user: { id: principal.user.id, name: principal.user.name },
        accounts: memberships.map((m) => ({ name: m.account, role: m.role }))
      }
    })

    /** An account with its members; members only. */
    const get = Tracing.fn("Accounts.get")(function*(principal: Principal, name: AccountName) {
      const account = yield* named(name)
      const membership = yield* Policy.requireMember(principal, account, "reading the account")
      const members = yield* store.membersOf(account.id)
      return { name: account.name, created_at: account.created_at, role: membership.role, members }
    })

    /** Renames an account (owner or admin). Renaming to the current name changes nothing. */
    const rename = Tracing.fn("Accounts.rename")(function*(principal: Principal, name: AccountName, newName: AccountName) {
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

    return { me, get, rename } as const
  })
}) {}
