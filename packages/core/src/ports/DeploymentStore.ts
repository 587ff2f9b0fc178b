import { Context, type DateTime, Effect, type Option } from "effect"
import type { ConcurrentSend, DeploymentId, DeploymentRecord, Follow } from "../model/Deployment.js"
import type { StorageError } from "../model/Errors.js"
import type { AccountId, AgentName, BuildId } from "../model/Ids.js"
import type { EnvOverrides } from "../model/Secret.js"

/** Deployment records. */
export class DeploymentStore extends Context.Tag("@hosting/core/DeploymentStore")<DeploymentStore, {
  /**
   * Creates the record, or replaces the record with the same id; a replaced
   * record keeps its settings (they change only through `updateSettings`).
   */
  readonly upsert: (record: {
    readonly id: DeploymentId
    readonly account_id: AccountId
    readonly publisher_id: AccountId
    readonly agent_name: AgentName
    readonly build_id: BuildId
    readonly namespace: string
    readonly status: string
    /** The cluster's reason for the status, and its message, when it gave them. */
    readonly status_reason?: string | undefined
    readonly status_message?: string | undefined
    readonly deployed_at: DateTime.Utc
    readonly undeployed_at: Option.Option<DateTime.Utc>
    readonly spec: Readonly<Record<string, unknown>>
    /** The deployment a rollback made this one from. */
    readonly rolled_back_from?: DeploymentId | undefined
    /** The range or channel the deployment follows. */
    readonly follow?: Follow | undefined
    /** The deployment this one rolled forward from, by following. */
    readonly rolled_forward_from?: DeploymentId | undefined
    /** The strategy for a send while a reply streams, when the deployment has one (a new record only). */
    readonly concurrent_send?: ConcurrentSend | undefined
    /** The env the deploy set over the spec's (secret references, never values). */
    readonly env?: EnvOverrides | undefined
  }) => Effect.Effect<void, StorageError>
  /** Sets a deployment's settings (none when no record has that id). */
  readonly updateSettings: (
    id: DeploymentId,
    settings: { readonly concurrent_send: ConcurrentSend }
  ) => Effect.Effect<void, StorageError>
  readonly findById: (id: DeploymentId) => Effect.Effect<Option.Option<DeploymentRecord>, StorageError>
  /** The most recent deployment into a namespace, live or not. */
  readonly findByNamespace: (namespace: string) => Effect.Effect<Option.Option<DeploymentRecord>, StorageError>
  /** Live (not undeployed) deployments into a namespace. */
  readonly liveInNamespace: (namespace: string) => Effect.Effect<ReadonlyArray<DeploymentRecord>, StorageError>
  /** Deployments of an agent made by the given accounts, most recent first. */
  readonly listForAgent: (
    publisherId: AccountId,
    agentName: AgentName,
    accountIds: ReadonlyArray<AccountId>
  ) => Effect.Effect<ReadonlyArray<DeploymentRecord>, StorageError>
  /** Live deployments made by the given accounts, by id after `after` (from the start when absent), at most `limit`. */
  readonly liveOfAccounts: (
    accountIds: ReadonlyArray<AccountId>,
    after: DeploymentId | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<DeploymentRecord>, StorageError>
  /** Ends a deployment: sets its status and undeployed_at, and drops the status's reason and message. */
  readonly markUndeployed: (id: DeploymentId, status: string, at: DateTime.Utc) => Effect.Effect<void, StorageError>
  /**
   * Sets the status of a live deployment whose status is still `from`, with
   * its reason and message (none when absent); `false` when the deployment
   * ended or its status changed meanwhile (another process wrote it first).
   */
  readonly setStatus: (
    id: DeploymentId,
    from: string,
    to: { readonly status: string; readonly status_reason?: string | undefined; readonly status_message?: string | undefined }
  ) => Effect.Effect<boolean, StorageError>
  /** Live deployments with one of the statuses, by id after `after` (from the start when absent), at most `limit`. */
  readonly listLiveWithStatus: (
    statuses: ReadonlyArray<string>,
    after: DeploymentId | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<DeploymentRecord>, StorageError>
  /** Live deployments of an agent, by any account, that follow a range or a channel; oldest first. */
  readonly listFollowing: (publisherId: AccountId, agentName: AgentName) => Effect.Effect<ReadonlyArray<DeploymentRecord>, StorageError>
  /** Live deployments of an agent, by any account, that run the build; oldest first. */
  readonly liveOfBuild: (publisherId: AccountId, agentName: AgentName, buildId: BuildId) => Effect.Effect<ReadonlyArray<DeploymentRecord>, StorageError>
  /** Accounts other than the publisher with a live (not undeployed) deployment of the agent. */
  readonly accountsDeploying: (publisherId: AccountId, agentName: AgentName) => Effect.Effect<ReadonlyArray<AccountId>, StorageError>
}>() {}
