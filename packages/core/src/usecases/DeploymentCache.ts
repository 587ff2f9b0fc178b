/**
 * Deployment records kept in the process: a record by id (read on every
 * chat call) and an agent's deployment history as a caller's accounts see
 * it (read on every visit of the agent's deployments page).
 *
 * It sits between the use cases and storage, as a DeploymentStore, an
 * AccountStore and a Transactor around the real ones, and needs an EventBus
 * (without one it keeps nothing):
 *
 * - Every write through them that can change a record (a deployment
 *   written, its settings or status changed, it ended; an account renamed
 *   or deleted) forgets everything when it starts and when it ends, and a
 *   transaction during which such a write ended forgets everything again
 *   once it committed (the Transactor is wrapped too): on one process
 *   nothing stale is served once the write returned, nor kept from a read
 *   that another connection made before the commit.
 * - Every change to a deployment, on any process, wakes its deploying
 *   account on the event bus (a roll forward also its publisher; a rename
 *   the renamed account). What is kept was read with the wake-ups of every
 *   account it depends on followed (a record: its deploying and publishing
 *   accounts; a history: the publisher and the caller's accounts), and any
 *   wake-up of a followed account forgets everything. So what another
 *   process changed is at most one wake-up's delivery behind.
 * - A read during which anything was forgotten, or an account newly
 *   followed, keeps nothing.
 * - Everything is forgotten at least every `refresh` (10 s by default): a
 *   wake-up that never arrived (on Postgres, sent while the process's
 *   listening connection was cut) leaves what was kept stale no longer.
 *
 * At most `accounts` accounts are followed (reads needing others go to
 * storage every time) and `records` records kept, histories counted by
 * their length (past it, the cache starts over).
 */
import { Clock, Context, Duration, Effect, type Fiber, Layer, Option, Scope } from "effect"
import type { DeploymentId, DeploymentRecord } from "../model/Deployment.js"
import type { AccountId } from "../model/Ids.js"
import { EventBus } from "../ports/EventBus.js"
import { AccountStore, DeploymentStore, Transactor } from "../ports/Ports.js"
import * as Steps from "../runtime/Steps.js"

/** How much the cache holds. */
export interface DeploymentCacheLimits {
  /** Most accounts whose wake-ups are followed. */
  readonly accounts: number
  /** Most records kept, a history counting as many as it holds. */
  readonly records: number
  /** How often everything kept is forgotten whatever happened. */
  readonly refresh: Duration.DurationInput
}

export const defaultLimits: DeploymentCacheLimits = { accounts: 1000, records: 10_000, refresh: Duration.seconds(10) }

/**
 * The DeploymentStore, AccountStore and Transactor of context, with records
 * and histories kept as the module says; without an EventBus, the three as
 * they are.
 */
export const layer = (limits: DeploymentCacheLimits = defaultLimits) =>
  Layer.scopedContext(Effect.gen(function*() {
    const store = yield* DeploymentStore
    const accounts = yield* AccountStore
    const tx = yield* Transactor
    const bus = yield* Effect.serviceOption(EventBus)
    if (Option.isNone(bus)) {
      return Context.make(DeploymentStore, store).pipe(Context.add(AccountStore, accounts), Context.add(Transactor, tx))
    }
    return make(store, accounts, tx, bus.value, yield* Effect.scope, limits)
  }))

const make = (
  store: DeploymentStore["Type"],
  accounts: AccountStore["Type"],
  tx: Transactor["Type"],
  bus: EventBus["Type"],
  scope: Scope.Scope,
  limits: DeploymentCacheLimits
) => {
  const records = new Map<DeploymentId, DeploymentRecord>()
  const histories = new Map<string, ReadonlyArray<DeploymentRecord>>()
  let kept = 0
  const followed = new Set<AccountId>()
  // Moves whenever something is forgotten or newly followed: a read that saw it move keeps nothing.
  let epoch = 0
  const forgetNow = () => {
    epoch++
    records.clear()
    histories.clear()
    kept = 0
  }
  const forget = Effect.sync(forgetNow)
  // Counts the writes that may change records, as they end: a transaction during which it moved forgets once it committed.
  let written = 0
  /** A write that may change records: everything kept is forgotten when it starts and when it ends. */
  const changing = <A, E>(write: Effect.Effect<A, E>) =>
    Effect.zipRight(
      forget,
      Effect.ensuring(
        write,
        Effect.sync(() => {
          written++
          forgetNow()
        })
      )
    )
  /** A transaction: when a write that may change records ended during it, everything kept is forgotten at its end. */
  const withTransaction: Transactor["Type"]["withTransaction"] = (effect) =>
    Effect.withFiberRuntime((_, status) => {
      const before = written
      return Steps.ensuringFor(status, tx.withTransaction(effect), Effect.suspend(() => written === before ? Effect.void : forget))
    })

  const follow = (account: AccountId) =>
    Effect.suspend(() => {
      if (followed.has(account) || followed.size >= limits.accounts) return Effect.void
      followed.add(account)
      epoch++
      // Subscribed here, in the reader's fiber, so that the subscription is live when this returns.
      return Effect.flatMap(Scope.extend(bus.subscribe(account), scope), (wakeups) =>
        Effect.forkIn(Effect.interruptible(Effect.forever(Effect.zipRight(wakeups.take, forget))), scope))
    })

  /** Whether what was read since `since`, depending on `needed`, may be kept; when not for want of following, follows them. */
  const mayKeep = (since: number, needed: ReadonlyArray<AccountId>, size: number) => {
    if (epoch !== since) return Effect.succeed(false)
    if (needed.every((account) => followed.has(account))) {
      if (kept + size > limits.records) forgetNow()
      kept += size
      return Effect.succeed(true)
    }
    return Effect.as(Effect.forEach(needed, follow, { discard: true }), false)
  }

  // Checked at each read, on the fiber's clock (no timer of its own: a test clock moved by days would run it for each step).
  const refreshMs = Duration.toMillis(limits.refresh)
  let refreshAt = 0
  const refreshIfDue = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
    const now = Context.get(fiber.currentDefaultServices, Clock.Clock).unsafeCurrentTimeMillis()
    if (now < refreshAt) return
    forgetNow()
    refreshAt = now + refreshMs
  }

  const findById: DeploymentStore["Type"]["findById"] = (id) =>
    Effect.withFiberRuntime((fiber) => {
      refreshIfDue(fiber)
      const found = records.get(id)
      if (found !== undefined) return Effect.succeed(Option.some(found))
      const since = epoch
      return Effect.tap(store.findById(id), (read) =>
        Option.isNone(read)
          ? Effect.void
          : Effect.map(mayKeep(since, [read.value.account_id, read.value.publisher_id], 1), (keep) => {
            if (keep) records.set(id, read.value)
          }))
    })

  const listForAgent: DeploymentStore["Type"]["listForAgent"] = (publisherId, agentName, accountIds) =>
    Effect.withFiberRuntime((fiber) => {
      refreshIfDue(fiber)
      const key = `${publisherId}\n${agentName}\n${accountIds.join("\n")}`
      const found = histories.get(key)
      if (found !== undefined) return Effect.succeed(found)
      const since = epoch
      return Effect.tap(store.listForAgent(publisherId, agentName, accountIds), (read) =>
        Effect.map(mayKeep(since, [publisherId, ...accountIds], Math.max(1, read.length)), (keep) => {
          if (keep) histories.set(key, read)
        }))
    })

  return Context.make(
    DeploymentStore,
    DeploymentStore.of({
      ...store,
      findById,
      listForAgent,
      upsert: (record) => changing(store.upsert(record)),
      updateSettings: (id, settings) => changing(store.updateSettings(id, settings)),
      markUndeployed: (id, status, at) => changing(store.markUndeployed(id, status, at)),
      setStatus: (id, from, to) => changing(store.setStatus(id, from, to))
    })
  ).pipe(
    Context.add(
      AccountStore,
      AccountStore.of({
        ...accounts,
        rename: (id, name) => changing(accounts.rename(id, name)),
        deleteAccount: (id) => changing(accounts.deleteAccount(id))
      })
    ),
    Context.add(Transactor, Transactor.of({ withTransaction }))
  )
}
