/**
 * A test hook that a cluster double offers beside the Cluster port: make the
 * rollout of a namespace's workloads fail, as a real cluster reports an image
 * that cannot be pulled or a container that keeps crashing. The fake cluster
 * provides it; the Kubernetes adapter's tests provide it over their API
 * double. The cluster contract suite uses it when the layer under test has it.
 */
import { Context, Effect, Option } from "effect"

export class RolloutControl extends Context.Tag("@hosting/testing/RolloutControl")<RolloutControl, {
  /**
   * Fails the current rollout of every workload in the namespace with the
   * cluster's reason (`ImagePullBackOff`) and message; the next apply of a
   * changed workload starts a rollout that does not fail.
   */
  readonly failRollout: (namespace: string, reason: string, message: string) => Effect.Effect<void>
}>() {}

/**
 * Fails the rollouts of a namespace through the RolloutControl of the
 * context; a defect when the cluster under test offers none (it is not a double).
 */
export const failRollout = (namespace: string, reason: string, message: string): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(RolloutControl), Option.match({
    onNone: () => Effect.dieMessage("RolloutControl.failRollout: the cluster under test is not a double that can fail rollouts"),
    onSome: (control) => control.failRollout(namespace, reason, message)
  }))
