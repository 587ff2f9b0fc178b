import { Effect, Option } from "effect"
import type { StorageError } from "../model/Errors.js"
import type { AccountId, AccountName } from "../model/Ids.js"
import * as Policy from "../model/Policy.js"
import type { Principal } from "../model/Principal.js"
import type { AccountStore } from "../ports/Ports.js"

/** Turns an absent result of a lookup into the domain's error. */
export const orFail = <E>(onNone: () => E) => <A, E2, R>(self: Effect.Effect<Option.Option<A>, E2, R>) =>
  Effect.flatMap(self, Option.match({ onNone: () => Effect.fail(onNone()), onSome: (a: A) => Effect.succeed(a) }))

/**
 * The id of the account `name` names: a member of it has the id in the
 * principal's memberships (no read); for anyone else the account is read,
 * and an absent one fails with `onNone`.
 */
export const accountIdNamed = <E>(
  accounts: AccountStore["Type"],
  principal: Principal,
  name: AccountName,
  onNone: () => E
): Effect.Effect<AccountId, E | StorageError> => {
  const own = Policy.memberAccountIdByName(principal, name)
  return own !== undefined
    ? Effect.succeed(own)
    : Effect.map(accounts.findByName(name).pipe(orFail(onNone)), (account) => account.id)
}
