/**
 * Secrets of an account: set (create or replace), list by name, delete. A
 * value is never answered, logged, put in an event or in the audit log; a
 * deploy reads it (Deployments) to give it to the running agent.
 */
import { DateTime, Effect, Option, type Redacted } from "effect"
import { AccountNotFound, SecretNotFound } from "../model/Errors.js"
import type { AccountName } from "../model/Ids.js"
import * as Policy from "../model/Policy.js"
import type { Principal } from "../model/Principal.js"
import type { SecretName } from "../model/Secret.js"
import { audit } from "../internal/audit.js"
import { orFail } from "../internal/lookup.js"
import { AccountStore, Transactor } from "../ports/Ports.js"
import * as Tracing from "../runtime/Tracing.js"

export class Secrets extends Effect.Service<Secrets>()("@hosting/core/Secrets", {
  effect: Effect.gen(function*() {
    const store = yield* AccountStore
    const tx = yield* Transactor

    /** The account, when the caller may list its secrets (members) or change them (`manage`: owners and admins). */
    const accountFor = Effect.fnUntraced(function*(principal: Principal, name: AccountName, manage: boolean) {
      const account = yield* store.findByName(name).pipe(orFail(() => new AccountNotFound({ account: name })))
      const refused = Policy.secretsRefusal(principal, account, manage)
      if (Option.isSome(refused)) return yield* refused.value
      return account
    })

    /** The account's secrets, by name and time (members). */
    const list = Tracing.fn("Secrets.list")(function*(principal: Principal, account: AccountName) {
      const found = yield* accountFor(principal, account, false)
      return yield* store.secretsOf(found.id)
    })

    /** Sets the secret, with its audit entry (in the caller's transaction). */
    const storeSecret = Effect.fnUntraced(function*(
      principal: Principal,
      account: AccountName,
      name: SecretName,
      value: Redacted.Redacted<string>
    ) {
      const found = yield* accountFor(principal, account, true)
      const now = yield* DateTime.now
      const { created } = yield* store.putSecret({ account_id: found.id, name, value, now })
      // The audit log names the secret, never its value.
      yield* audit(
        store,
        principal,
        [found.id],
        "secret.set",
        name,
        `${created ? "Created" : "Changed"} the secret ${name}; running deployments keep the value they were deployed with.`
      )
      return { name, created, updated_at: now }
    })

    /** Sets a secret (owners and admins): creates it or replaces its value. */
    const set = Tracing.fn("Secrets.set")(function*(
      principal: Principal,
      account: AccountName,
      name: SecretName,
      value: Redacted.Redacted<string>
    ) {
      return yield* tx.withTransaction(storeSecret(principal, account, name, value))
    })

    /** Deletes the secret, with its audit entry (in the caller's transaction). */
    const removeSecret = Effect.fnUntraced(function*(principal: Principal, account: AccountName, name: SecretName) {
      const found = yield* accountFor(principal, account, true)
      const removed = yield* store.removeSecret(found.id, name)
      if (!removed) return yield* new SecretNotFound({ account: found.name, name })
      yield* audit(
        store,
        principal,
        [found.id],
        "secret.deleted",
        name,
        `Deleted the secret ${name}; running deployments keep the value they were deployed with.`
      )
      return { name }
    })

    /** Deletes a secret (owners and admins); a secret that does not exist is 404. */
    const remove = Tracing.fn("Secrets.remove")(function*(principal: Principal, account: AccountName, name: SecretName) {
      return yield* tx.withTransaction(removeSecret(principal, account, name))
    })

    return { list, set, remove } as const
  })
}) {}
