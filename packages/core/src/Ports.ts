/**
 * The ports of the core: what the use cases need from the outside world.
 * Adapters implement them as Layers; the contract suites in @hosting/testing
 * say what every implementation must do.
 */
import { Context, type DateTime, Effect, Layer, type Option } from "effect"
import { v7 as uuidV7 } from "uuid"
import type { Account, Member, Membership, User } from "./Account.js"
import type { AgentRecord, AgentSummary, Build } from "./Agent.js"
import type { ConversationId, ConversationRecord, Message, MessageId, MessageStatus } from "./Conversation.js"
import type { DeploymentId, DeploymentRecord } from "./Deployment.js"
import type { FileRecord } from "./File.js"
import type { StorageError } from "./Errors.js"
import type { NewEvent, StoredEvent } from "./Event.js"
import type { Principal } from "./Principal.js"
import type { TraceQuery, TraceRecord } from "./Trace.js"
import type { AccountId, AccountName, AgentId, AgentName, BuildId, Role, SemVer, UserId } from "./Ids.js"

/** Runs an effect as one storage transaction: all of its writes land, or none do. */
export class Transactor extends Context.Tag("@hosting/core/Transactor")<Transactor, {
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}>() {}

/** Accounts, users and memberships. */
export class AccountStore extends Context.Tag("@hosting/core/AccountStore")<AccountStore, {
  readonly findByName: (name: AccountName) => Effect.Effect<Option.Option<Account>, StorageError>
  readonly findById: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
  /** Creates the account, or returns the existing one of that name. */
  readonly ensure: (input: { readonly id: AccountId; readonly name: AccountName; readonly now: DateTime.Utc }) => Effect.Effect<Account, StorageError>
  /** Renames; `false` when the new name is already taken by another account. */
  readonly rename: (id: AccountId, name: AccountName) => Effect.Effect<boolean, StorageError>
  readonly findUser: (id: UserId) => Effect.Effect<Option.Option<User>, StorageError>
  /** Creates the user or updates its display name. */
  readonly upsertUser: (user: User) => Effect.Effect<void, StorageError>
  /** Sets (creates or changes) the role of a user in an account. */
  readonly setMembership: (accountId: AccountId, userId: UserId, role: Role) => Effect.Effect<void, StorageError>
  readonly membershipsOf: (userId: UserId) => Effect.Effect<ReadonlyArray<Membership>, StorageError>
  readonly membersOf: (accountId: AccountId) => Effect.Effect<ReadonlyArray<Member>, StorageError>
}>() {}

/** Bearer tokens, stored only as SHA-256 hashes. */
export class TokenStore extends Context.Tag("@hosting/core/TokenStore")<TokenStore, {
  /**
   * What authentication needs of a token hash, in one read: the token's
   * expiry (none: it does not expire) and its user with their memberships
   * (by account name). None when the hash, or the user it belongs to, is
   * unknown.
   */
  readonly findPrincipal: (hash: string) => Effect.Effect<
    Option.Option<{ readonly hash: string; readonly expires_at: Option.Option<DateTime.Utc>; readonly principal: Principal }>,
    StorageError
  >
  /**
   * Stores a token hash for a user; storing the same hash again changes
   * nothing. A token made from another credential (`parent_hash`: a
   * session signed in with a token, a device login approved in a session)
   * lives only as long as that one: it is stored only while the parent is,
   * and removed with it. `false` when the parent is gone (nothing stored).
   */
  readonly add: (input: {
    readonly hash: string
    readonly user_id: UserId
    readonly expires_at: Option.Option<DateTime.Utc>
    readonly parent_hash: Option.Option<string>
    readonly now: DateTime.Utc
  }) => Effect.Effect<boolean, StorageError>
  /**
   * Forgets a token (revocation), and with it every token made from it,
   * transitively, and the device logins decided with it; `false` when there
   * was none with that hash.
   */
  readonly remove: (hash: string) => Effect.Effect<boolean, StorageError>
}>() {}

/** A device login in progress (RFC 8628): stored by the hash of its device code. */
export interface DeviceCodeRecord {
  readonly device_hash: string
  /** What the user types on the approval page: `XXXX-XXXX`. */
  readonly user_code: string
  readonly client_id: string
  readonly scope: string
  readonly status: "pending" | "approved" | "denied"
  /** Who approved or denied it. */
  readonly user_id: Option.Option<UserId>
  /** The hash of the credential (a browser session) it was decided with: the access token it gives is made from it. */
  readonly decided_by: Option.Option<string>
  /** Seconds the client must wait between polls (grows with slow_down). */
  readonly interval: number
  readonly last_polled_at: Option.Option<DateTime.Utc>
  readonly expires_at: DateTime.Utc
  readonly created_at: DateTime.Utc
}

/** Device logins in progress. */
export class DeviceCodeStore extends Context.Tag("@hosting/core/DeviceCodeStore")<DeviceCodeStore, {
  readonly insert: (record: DeviceCodeRecord) => Effect.Effect<void, StorageError>
  readonly findByUserCode: (userCode: string) => Effect.Effect<Option.Option<DeviceCodeRecord>, StorageError>
  readonly findByDeviceHash: (hash: string) => Effect.Effect<Option.Option<DeviceCodeRecord>, StorageError>
  /**
   * Records the user's decision on a pending code, made with the credential
   * of hash `decidedBy`; `false` when it was not pending any more. The code
   * goes when that credential is removed.
   */
  readonly decide: (
    userCode: string,
    status: "approved" | "denied",
    userId: UserId,
    decidedBy: string
  ) => Effect.Effect<boolean, StorageError>
  /** Records a poll and the interval the client must keep from now on. */
  readonly recordPoll: (hash: string, at: DateTime.Utc, interval: number) => Effect.Effect<void, StorageError>
  /** Removes a code; `false` when another poll removed it first (a code gives at most one token). */
  readonly remove: (hash: string) => Effect.Effect<boolean, StorageError>
  /** Removes codes that expired before the time; returns how many went. */
  readonly pruneExpired: (before: DateTime.Utc) => Effect.Effect<number, StorageError>
}>() {}

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
  /** Every build of the agent, most recently registered first. */
  readonly listBuilds: (agentId: AgentId) => Effect.Effect<ReadonlyArray<Build>, StorageError>
  /** Agents with at least one published version, by most recent publication. */
  readonly listPublished: (query: CatalogQuery) => Effect.Effect<{
    readonly agents: ReadonlyArray<AgentSummary>
    readonly total: number
  }, StorageError>
}>() {}

/** The account event log (the source of truth for the event stream). */
export class EventLog extends Context.Tag("@hosting/core/EventLog")<EventLog, {
  /** Appends events in the caller's transaction; ids are decimal strings that grow monotonically. */
  readonly append: (events: ReadonlyArray<NewEvent>, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageError>
  /** Events of an account after an id (all of them for None), oldest first, at most `limit`. */
  readonly after: (accountId: AccountId, afterId: Option.Option<string>, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageError>
  /** The newest `limit` events of an account after an id, oldest first. */
  readonly latest: (accountId: AccountId, afterId: Option.Option<string>, limit: number) => Effect.Effect<ReadonlyArray<StoredEvent>, StorageError>
  /**
   * Ids that bound the log of every account: `pruned` is the highest id ever
   * deleted by retention (0 when none), `newest` the highest id written (0 when none).
   */
  readonly horizon: Effect.Effect<{ readonly pruned: bigint; readonly newest: bigint }, StorageError>
  /** Deletes events created before the time; returns how many went. */
  readonly prune: (before: DateTime.Utc) => Effect.Effect<number, StorageError>
}>() {}

/** Deployment records. */
export class DeploymentStore extends Context.Tag("@hosting/core/DeploymentStore")<DeploymentStore, {
  /** Creates the record, or replaces the record with the same id. */
  readonly upsert: (record: {
    readonly id: DeploymentId
    readonly account_id: AccountId
    readonly publisher_id: AccountId
    readonly agent_name: AgentName
    readonly build_id: BuildId
    readonly namespace: string
    readonly status: string
    readonly deployed_at: DateTime.Utc
    readonly undeployed_at: Option.Option<DateTime.Utc>
    readonly spec: Readonly<Record<string, unknown>>
  }) => Effect.Effect<void, StorageError>
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
  /** Ends a deployment: sets its status and undeployed_at. */
  readonly markUndeployed: (id: DeploymentId, status: string, at: DateTime.Utc) => Effect.Effect<void, StorageError>
  /** Accounts other than the publisher with a live (not undeployed) deployment of the agent. */
  readonly accountsDeploying: (publisherId: AccountId, agentName: AgentName) => Effect.Effect<ReadonlyArray<AccountId>, StorageError>
}>() {}

/** Fresh identifiers. */
export class IdGenerator extends Context.Tag("@hosting/core/IdGenerator")<IdGenerator, {
  readonly next: Effect.Effect<string>
}>() {}

/** Random UUID v4 identifiers (Web Crypto). */
export const IdGeneratorRandom: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, {
  next: Effect.sync(() => globalThis.crypto.randomUUID())
})

/**
 * UUID v7 identifiers (RFC 9562): a millisecond timestamp first, then random
 * bits, increasing within one process. Stored as keys, new ids land at the
 * end of an index instead of on a random page of it, so a write dirties
 * fewer pages; the servers use these. They tell when they were made, to the
 * millisecond.
 */
export const IdGeneratorTimeOrdered: Layer.Layer<IdGenerator> = Layer.succeed(IdGenerator, {
  next: Effect.sync(() => uuidV7())
})

/** Conversations and their messages. */
export class ConversationStore extends Context.Tag("@hosting/core/ConversationStore")<ConversationStore, {
  readonly find: (id: ConversationId) => Effect.Effect<Option.Option<ConversationRecord>, StorageError>
  /** A user's conversations on a deployment, most recently updated first. */
  readonly listFor: (deploymentId: DeploymentId, ownerId: UserId) => Effect.Effect<ReadonlyArray<ConversationRecord>, StorageError>
  readonly setTitle: (id: ConversationId, title: string, now: DateTime.Utc) => Effect.Effect<void, StorageError>
  /**
   * Starts a turn (interface.md send-message rules): creates the
   * conversation on its first message, then, unless the turn is refused,
   * stores the user message and the streaming reply and counts the user
   * message (the one that reaches the limit makes the conversation
   * terminal). Run it in a transaction: it holds the conversation until the
   * transaction ends (where the database has row locks), so that concurrent
   * sends to one conversation, even from several processes, take turns. A
   * refused turn writes nothing. The rules are `Turn.decide`'s: a store
   * reads the conversation, asks it, and writes what it answers.
   */
  readonly startTurn: (turn: TurnInput) => Effect.Effect<TurnStart, StorageError>
  /**
   * Appends a message; a user message counts toward the limit. Moves
   * `updated_at`. A streaming reply carries the lease of the process that
   * receives it.
   */
  readonly append: (input: {
    readonly conversation_id: ConversationId
    readonly message: Message
    readonly client_message_id: Option.Option<string>
    readonly lease?: ReplyLease | undefined
  }) => Effect.Effect<void, StorageError>
  /** Every message of the conversation, oldest first. */
  readonly messages: (conversationId: ConversationId) => Effect.Effect<ReadonlyArray<Message>, StorageError>
  /** The newest assistant message of the conversation. */
  readonly latestReply: (conversationId: ConversationId) => Effect.Effect<Option.Option<Message>, StorageError>
  /** Replaces a message's content and status (a reply's progress). */
  readonly updateMessage: (
    id: MessageId,
    content: string,
    status: MessageStatus,
    now: DateTime.Utc
  ) => Effect.Effect<void, StorageError>
  /**
   * Stores what arrived of several replies in one write (the periodic
   * flush); a reply that is no longer `streaming` is left as it is.
   */
  readonly flushReplies: (
    progress: ReadonlyArray<{ readonly id: MessageId; readonly content: string }>,
    now: DateTime.Utc
  ) => Effect.Effect<void, StorageError>
  /** Extends the leases of every reply that `owner` is still receiving. */
  readonly renewLeases: (owner: string, expiresAt: DateTime.Utc) => Effect.Effect<void, StorageError>
  /**
   * The lease owners of streaming replies that the storage knows are gone
   * (see `LeaseOwner`); none where it cannot tell.
   */
  readonly goneOwners: Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * Closes as `failed` (keeping their content) the replies left `streaming`:
   * with `leaseEndedBefore`, only those whose lease ended before that time
   * (their process stopped renewing) and those of `ownersGone`; without,
   * all of them (one process owns the storage and has just started).
   * Returns what it closed.
   */
  readonly closeStreaming: (
    leaseEndedBefore: Option.Option<DateTime.Utc>,
    ownersGone?: ReadonlyArray<string>
  ) => Effect.Effect<
    ReadonlyArray<{ readonly conversation_id: ConversationId; readonly message: Message }>,
    StorageError
  >
}>() {}

/** A turn to start: the user's message and the reply that answers it, both at the message's time. */
export interface TurnInput {
  readonly conversation_id: ConversationId
  /** Whose conversation it is: a conversation of another user or deployment refuses the turn. */
  readonly deployment_id: DeploymentId
  readonly owner_id: UserId
  /** The title of a conversation this turn creates. */
  readonly title: string
  readonly message: Message
  /** Makes a retried send idempotent: the turn of an earlier message with this id is not started again. */
  readonly client_message_id: Option.Option<string>
  /** The empty streaming reply, with the lease of the process that receives it. */
  readonly reply: Message
  readonly lease: ReplyLease
  /** User messages a conversation takes before it is terminal. */
  readonly message_limit: number
}

/** What came of starting a turn. */
export type TurnStart =
  /** Both messages are stored; `user_messages` is how many the conversation had before this one. */
  | { readonly _tag: "Started"; readonly user_messages: number }
  /** The conversation already holds the user message with this client_message_id. */
  | { readonly _tag: "Repeated"; readonly message: Message }
  /** The conversation belongs to another user or another deployment. */
  | { readonly _tag: "NotOwner" }
  /** The conversation is terminal, or holds as many user messages as the limit. */
  | { readonly _tag: "LimitReached" }

/** Who is receiving a streaming reply, and until when that claim holds unless renewed. */
export interface ReplyLease {
  readonly owner: string
  readonly expires_at: DateTime.Utc
}

/**
 * This process as the owner of reply leases, where the storage itself knows
 * whether that owner lives (Postgres: a session lock that the database
 * releases when the process's connection goes); `goneOwners` names the
 * owners that are gone. A storage without it leaves Chat to name an owner of
 * its own, and only the lease tells that a process stopped.
 */
export class LeaseOwner extends Context.Tag("@hosting/core/LeaseOwner")<LeaseOwner, {
  readonly name: string
}>() {}

/** File records (metadata; the bytes are in the object store). */
export class FileStore extends Context.Tag("@hosting/core/FileStore")<FileStore, {
  /** Creates or replaces the record with the same key. */
  readonly upsert: (file: FileRecord) => Effect.Effect<void, StorageError>
  /** A file of the deployment with that key, if any (whatever its owner or status). */
  readonly find: (deploymentId: DeploymentId, key: string) => Effect.Effect<Option.Option<FileRecord>, StorageError>
  /** A user's files on a deployment, newest first. */
  readonly listFor: (deploymentId: DeploymentId, ownerId: UserId) => Effect.Effect<ReadonlyArray<FileRecord>, StorageError>
  /** Pending files of every deployment reserved before the time, oldest first, at most `limit`. */
  readonly pendingBefore: (time: DateTime.Utc, limit: number) => Effect.Effect<ReadonlyArray<FileRecord>, StorageError>
  /** Removes the record if it is still pending; `false` when it is ready or gone. */
  readonly removePending: (deploymentId: DeploymentId, key: string) => Effect.Effect<boolean, StorageError>
}>() {}

/** Observability traces. */
export class TraceStore extends Context.Tag("@hosting/core/TraceStore")<TraceStore, {
  /** Stores traces; a trace with the id of a stored trace of the same agent replaces it. */
  readonly append: (traces: ReadonlyArray<TraceRecord>) => Effect.Effect<void, StorageError>
  /** One page of an agent's traces, newest first, and how many match the filters in all. */
  readonly query: (query: TraceQuery) => Effect.Effect<{
    readonly traces: ReadonlyArray<TraceRecord>
    readonly total: number
  }, StorageError>
}>() {}

/** The storage port family: what a storage adapter provides. */
export type StoragePorts =
  | AccountStore
  | AgentStore
  | TokenStore
  | EventLog
  | DeploymentStore
  | ConversationStore
  | FileStore
  | TraceStore
  | DeviceCodeStore
  | Transactor
