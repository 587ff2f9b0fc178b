import { Effect, Option, Scope } from "effect"
import type { DeploymentId, DeploymentRecord } from "../model/Deployment.js"
import type { EventBus } from "../ports/EventBus.js"
import type { StorageError } from "../model/Errors.js"
import type { AccountId } from "../model/Ids.js"
import type { DeploymentStore } from "../ports/Ports.js"

export interface DeploymentCache {
  readonly findById: (id: DeploymentId) => Effect.Effect<Option.Option<DeploymentRecord>, StorageError>
}

/**
 * Deployment records kept in the process, for reads on every message.
 *
 * Every change to a deployment wakes its account on the event bus (deploys
 * and undeploys the deploying account, renames the renamed one), on every
 * process. A record is kept only when the wake-ups of both its accounts (the
 * deploying and the publishing one) were followed before its read began,
 * and nothing was woken or newly followed during the read; any wake-up of a
 * followed account drops every record. So a kept record is at most one
 * wake-up's delivery behind storage. Past `limits.accounts` followed
 * accounts, further records are read every time; past `limits.records`
 * kept, the cache starts over.
 */
export const make = (
  store: DeploymentStore["Type"],
  bus: EventBus["Type"],
  scope: Scope.Scope,
  limits: { readonly accounts: number; readonly records: number }
): DeploymentCache => {
  const records = new Map<DeploymentId, DeploymentRecord>()
  const followed = new Set<AccountId>()
  // Moves on every wake-up and every new subscription: a read that saw it move keeps nothing.
  let epoch = 0
  const dropAll = Effect.sync(() => {
    epoch++
    records.clear()
  })

  const follow = (account: AccountId) =>
    Effect.suspend(() => {
      if (followed.has(account) || followed.size >= limits.accounts) return Effect.void
      followed.add(account)
      epoch++
      // Subscribed here, in the reader's fiber, so that the subscription is live when this returns.
      return Effect.flatMap(Scope.extend(bus.subscribe(account), scope), (wakeups) =>
        Effect.forkIn(Effect.interruptible(Effect.forever(Effect.zipRight(wakeups.take, dropAll))), scope))
    })

  const keep = (record: DeploymentRecord, since: number) =>
    Effect.suspend(() => {
      if (epoch === since && followed.has(record.account_id) && followed.has(record.publisher_id)) {
        if (records.size >= limits.records) records.clear()
        records.set(record.id, record)
        return Effect.void
      }
      return Effect.zipRight(follow(record.account_id), follow(record.publisher_id))
    })

  return {
    findById: (id) =>
      Effect.suspend(() => {
        const kept = records.get(id)
        if (kept !== undefined) return Effect.succeed(Option.some(kept))
        const since = epoch
        return Effect.tap(store.findById(id), (found) => Option.isSome(found) ? keep(found.value, since) : Effect.void)
      })
  }
}
