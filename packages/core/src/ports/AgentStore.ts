import { Context, type DateTime, Effect, type Option } from "effect"
import type { AgentRecord, AgentSummary, Build, ChannelRecord } from "../model/Agent.js"
import type { StorageError } from "../model/Errors.js"
import type { AccountId, AgentId, AgentName, BuildId, ChannelName, SemVer } from "../model/Ids.js"

/** Query of the public catalog. */
export interface CatalogQuery {
  /** Case-insensitive substring of `account/name`. */
  readonly q: Option.Option<string>
  readonly limit: number
  readonly offset: number
}

/** Agents and their builds. */
export class AgentStore extends Context.Tag("@hosting/core/AgentStore")<AgentStore, {
  readonly findAgent: (accountId: AccountId, name: AgentName) => Effect.Effect<Option.Option<AgentRecord>, StorageError>
  /** Creates the agent, or updates its registry; returns the stored record. */
  readonly upsertAgent: (input: {
    readonly id: AgentId
    readonly account_id: AccountId
    readonly name: AgentName
    readonly registry: string
    readonly now: DateTime.Utc
  }) => Effect.Effect<AgentRecord, StorageError>
  readonly findBuild: (agentId: AgentId, buildId: BuildId) => Effect.Effect<Option.Option<Build>, StorageError>
  readonly findBuildByVersion: (agentId: AgentId, version: SemVer) => Effect.Effect<Option.Option<Build>, StorageError>
  /** Creates the build or replaces its content; keeps its version, publication and registration time. */
  readonly upsertBuild: (build: Build) => Effect.Effect<Build, StorageError>
  /** Attaches a version to a build. */
  readonly publishBuild: (input: {
    readonly agent_id: AgentId
    readonly build_id: BuildId
    readonly version: SemVer
    readonly now: DateTime.Utc
  }) => Effect.Effect<void, StorageError>
  /** Yanks a published build with a reason, or (reason none) undoes its yank. */
  readonly yankBuild: (input: {
    readonly agent_id: AgentId
    readonly build_id: BuildId
    readonly reason: Option.Option<string>
    readonly now: DateTime.Utc
  }) => Effect.Effect<void, StorageError>
  /** The agent's channels (never `latest`, which is implicit), by name. */
  readonly listChannels: (agentId: AgentId) => Effect.Effect<ReadonlyArray<ChannelRecord>, StorageError>
  /** Creates a channel or moves it to another version. */
  readonly setChannel: (channel: ChannelRecord) => Effect.Effect<void, StorageError>
  /** Removes a channel; false when there was none. */
  readonly removeChannel: (agentId: AgentId, name: ChannelName) => Effect.Effect<boolean, StorageError>
  /** Every build of the agent, most recently registered first. */
  readonly listBuilds: (agentId: AgentId) => Effect.Effect<ReadonlyArray<Build>, StorageError>
  /** Agents with at least one published version, by most recent publication. */
  readonly listPublished: (query: CatalogQuery) => Effect.Effect<{
    readonly agents: ReadonlyArray<AgentSummary>
    readonly total: number
  }, StorageError>
}>() {}
