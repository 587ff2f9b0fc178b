/**
 * Rollouts: a live deployment's status follows its workload in the cluster.
 * A deploy writes `pending`; the poll reads the rollout of every live
 * deployment that has not settled (`pending`, `progressing`) through the
 * Cluster port and writes what it finds (`progressing`, `available`, or
 * `failed` with the cluster's reason and message), each change with a
 * `deployment.changed` event to the deploying account's stream. Once
 * `available` or `failed`, a deployment is not read again until it is
 * deployed again (a new record).
 */
import { Cause, Context, DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import { type DeploymentId, type DeploymentRecord, DeploymentStatus, unsettledStatuses } from "../model/Deployment.js"
import { deploymentChanged } from "../internal/releases.js"
import { orFail } from "../internal/lookup.js"
import { DeploymentNotFound } from "../model/Errors.js"
import * as Cluster from "../ports/Cluster.js"
import { EventBus } from "../ports/EventBus.js"
import { DeploymentStore, EventLog, Transactor } from "../ports/Ports.js"
import * as Tracing from "../runtime/Tracing.js"

/** How often the rollouts of live deployments are read, and how many at most per round. */
export class RolloutsConfig extends Context.Reference<RolloutsConfig>()("@hosting/core/RolloutsConfig", {
  defaultValue: () => ({
    /** Time between two rounds (HOSTING_ROLLOUT_POLL_MS in the example server). */
    interval: Duration.seconds(5) as Duration.Duration,
    /** Deployments read per round: a round's cluster calls stay bounded; the next round goes on after the last one read. */
    batch: 50
  })
}) {}

/** The status (with reason and message) a rollout gives a deployment record. */
export const statusOf = (rollout: Option.Option<Cluster.Rollout>, namespace: string, workload: string) =>
  Option.match(rollout, {
    // A live deployment without its workload (removed behind the platform's back, or a fake cluster that restarted).
    onNone: () => ({
      status: DeploymentStatus.failed,
      status_reason: "WorkloadMissing",
      status_message: `The cluster has no workload ${workload} in namespace ${namespace}; deploy again to recreate it.`
    }),
    onSome: (r) => ({ status: DeploymentStatus[r.state], status_reason: r.reason, status_message: r.message })
  })

export class Rollouts extends Effect.Service<Rollouts>()("@hosting/core/Rollouts", {
  effect: Effect.gen(function*() {
    const store = yield* DeploymentStore
    const log = yield* EventLog
    const bus = yield* EventBus
    const cluster = yield* Cluster.Cluster
    const tx = yield* Transactor

    /**
     * Writes the status read, with `deployment.changed` (in the caller's
     * transaction); the record as stored, none when its status was no
     * longer the one read.
     */
    const writeStatus = Effect.fnUntraced(function*(record: DeploymentRecord, next: ReturnType<typeof statusOf>) {
      // Only from the status read: of two processes reading the same change, one writes it and tells the account.
      if (!(yield* store.setStatus(record.id, record.status, next))) return Option.none<DeploymentRecord>()
      const stored = yield* store.findById(record.id).pipe(orFail(() => new DeploymentNotFound({ deployment: record.id })))
      yield* log.append(deploymentChanged(stored, [stored.account_id]), yield* DateTime.now)
      return Option.some(stored)
    })

    /**
     * Reads the rollout of a deployment and writes its status when it
     * changed, with `deployment.changed` to the deploying account; the
     * record as it then is. A deployment that ended, or that another
     * process updated meanwhile, is left as it is.
     */
    const observe = Tracing.fn("Rollouts.observe")(function*(record: DeploymentRecord) {
      if (Option.isSome(record.undeployed_at)) return record
      const next = statusOf(yield* cluster.rolloutStatus(record.namespace, record.agent_name), record.namespace, record.agent_name)
      if (next.status === record.status && next.status_reason === record.status_reason && next.status_message === record.status_message) {
        return record
      }
      const written = yield* tx.withTransaction(writeStatus(record, next))
      if (Option.isNone(written)) return Option.getOrElse(yield* store.findById(record.id), () => record)
      yield* bus.publish([record.account_id])
      return written.value
    })

    /** Reads the rollout of one deployment now (see `observe`); unknown ids are DeploymentNotFound. */
    const refresh = (id: DeploymentId) =>
      Effect.flatMap(store.findById(id).pipe(orFail(() => new DeploymentNotFound({ deployment: id }))), observe)

    /**
     * One round: the live deployments that have not settled, up to `batch`
     * after `after` (by id), each read and written; a deployment the cluster
     * cannot answer for is logged and read again next round. Returns the id
     * to go on after, none once the round reached the end.
     */
    const round = Effect.fnUntraced(function*(after: DeploymentId | undefined, batch: number) {
      const records = yield* store.listLiveWithStatus(unsettledStatuses, after, batch)
      for (const record of records) {
        yield* observe(record).pipe(
          Effect.catchAll((error) => Effect.logWarning(`rollouts: could not read the rollout of ${record.id}`, error))
        )
      }
      return records.length < batch ? undefined : records[records.length - 1]!.id
    })

    return { observe, refresh, round } as const
  })
}) {}

/**
 * Reads the rollouts of live deployments every `interval` of RolloutsConfig,
 * `batch` at a time, for the life of the layer. A failed round is logged and
 * the next one tries again.
 */
export const poller = Layer.scopedDiscard(
  Effect.gen(function*() {
    const rollouts = yield* Rollouts
    const config = yield* RolloutsConfig
    let after: DeploymentId | undefined = undefined
    yield* Effect.suspend(() => rollouts.round(after, config.batch)).pipe(
      Effect.tap((next) =>
        Effect.sync(() => {
          after = next
        })
      ),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.logWarning("rollouts: a round of reads failed", cause)
      ),
      Effect.repeat(Schedule.spaced(config.interval)),
      Effect.forkScoped
    )
  })
)
