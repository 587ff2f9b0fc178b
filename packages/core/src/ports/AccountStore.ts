import { Context, type DateTime, Effect, type Option, type Redacted } from "effect"
import type { Account, Member, Membership, User } from "../model/Account.js"
import type { StorageError } from "../model/Errors.js"
import type { AuditAction } from "../model/Audit.js"
import type { AccountId, AccountName, Role, UserId } from "../model/Ids.js"
import type { SecretName, SecretSummary } from "../model/Secret.js"

/** An invitation to join an account, waiting for its invitee. */
export interface Invitation {
  readonly id: string
  readonly account_id: AccountId
  /** The SHA-256 of its one-time code. */
  readonly code_hash: string
  /** Whom it is meant for, as the inviter wrote it (shown, not enforced). */
  readonly email: Option.Option<string>
  readonly role: Role
  readonly created_by: UserId
  readonly created_at: DateTime.Utc
  readonly expires_at: DateTime.Utc
}

/** One entry of an account's audit log. */
export interface AuditEntry {
  /** Grows with every entry of the store. */
  readonly id: number
  readonly account_id: AccountId
  readonly at: DateTime.Utc
  /** Who did it. */
  readonly actor: UserId
  readonly action: AuditAction
  /** What it was done to: a user id, an agent `account/name@version`, a deployment id, a token's name. */
  readonly target: string
  /** A sentence for people. */
  readonly details: string
}

/** Accounts, users and memberships. */
export class AccountStore extends Context.Tag("@hosting/core/AccountStore")<AccountStore, {
  readonly findByName: (name: AccountName) => Effect.Effect<Option.Option<Account>, StorageError>
  readonly findById: (id: AccountId) => Effect.Effect<Option.Option<Account>, StorageError>
  /** Creates the account, or returns the existing one of that name. */
  readonly ensure: (input: { readonly id: AccountId; readonly name: AccountName; readonly now: DateTime.Utc }) => Effect.Effect<Account, StorageError>
  /** Creates a new account; none when another account has the name. */
  readonly create: (input: { readonly id: AccountId; readonly name: AccountName; readonly now: DateTime.Utc }) => Effect.Effect<Option.Option<Account>, StorageError>
  /** Renames; `false` when the new name is already taken by another account. */
  readonly rename: (id: AccountId, name: AccountName) => Effect.Effect<boolean, StorageError>
  readonly findUser: (id: UserId) => Effect.Effect<Option.Option<User>, StorageError>
  /** Creates the user or updates its display name. */
  readonly upsertUser: (user: User) => Effect.Effect<void, StorageError>
  /** Whether any user exists (none: the instance is not set up yet). */
  readonly hasUsers: Effect.Effect<boolean, StorageError>
  /** Creates a user, marked instance administrator or not. */
  readonly addUser: (input: {
    readonly id: UserId
    readonly name: string
    readonly instance_admin: boolean
    readonly now: DateTime.Utc
  }) => Effect.Effect<void, StorageError>
  /** Keeps the hash of a setup code (one per process that started without users). */
  readonly addSetupCode: (input: { readonly hash: string; readonly now: DateTime.Utc }) => Effect.Effect<void, StorageError>
  /** Spends a setup code: when its hash is kept, every setup code is forgotten and the answer is true. */
  readonly spendSetupCode: (hash: string) => Effect.Effect<boolean, StorageError>
  /** Sets (creates or changes) the role of a user in an account. */
  readonly setMembership: (accountId: AccountId, userId: UserId, role: Role) => Effect.Effect<void, StorageError>
  /**
   * Inside a transaction: holds the account's memberships until it ends, so
   * that a concurrent change of them waits (the rule "an account keeps an
   * owner" reads them, then writes). Nothing to do where transactions run
   * one at a time.
   */
  readonly lockMembers: (accountId: AccountId) => Effect.Effect<void, StorageError>
  /** Ends a user's membership of an account; `false` when there was none. */
  readonly removeMembership: (accountId: AccountId, userId: UserId) => Effect.Effect<boolean, StorageError>
  readonly addInvitation: (invitation: Invitation) => Effect.Effect<void, StorageError>
  /** The invitations of an account that have not expired at `now`, newest first. */
  readonly invitationsOf: (accountId: AccountId, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<Invitation>, StorageError>
  /** Withdraws an invitation of an account; `false` when it has none with that id. */
  readonly removeInvitation: (accountId: AccountId, id: string) => Effect.Effect<boolean, StorageError>
  /**
   * Takes the invitation of a code (by its hash), once: it is removed and
   * returned, unless it expired at `now` (then none, and it stays until
   * withdrawn).
   */
  readonly takeInvitation: (codeHash: string, now: DateTime.Utc) => Effect.Effect<Option.Option<Invitation>, StorageError>
  /** Appends entries to audit logs (each to its account's). */
  readonly recordAudit: (entries: ReadonlyArray<Omit<AuditEntry, "id">>) => Effect.Effect<void, StorageError>
  /** A page of an account's audit log, newest first, and how many entries it has. */
  readonly auditOf: (
    accountId: AccountId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{ readonly entries: ReadonlyArray<AuditEntry>; readonly total: number }, StorageError>
  /** The ids of deployments still running by the account, or of its agents by any account. */
  readonly liveDeployments: (accountId: AccountId) => Effect.Effect<ReadonlyArray<string>, StorageError>
  /**
   * Deletes an account and everything of it: its members, invitations,
   * secrets, audit log and events; its agents and their builds; every deployment by
   * it or of its agents (with their conversations, messages, files and
   * traces). Answers the files that were stored, so that their objects can
   * go too; none when there was no such account.
   */
  readonly deleteAccount: (accountId: AccountId) => Effect.Effect<
    Option.Option<ReadonlyArray<{ readonly deployment_id: string; readonly owner_id: UserId; readonly key: string; readonly ready: boolean }>>,
    StorageError
  >
  /**
   * Sets a secret of the account (creates it, or replaces its value);
   * answers whether it was created. The value is never read back but by
   * `secretValues`.
   */
  readonly putSecret: (input: {
    readonly account_id: AccountId
    readonly name: SecretName
    readonly value: Redacted.Redacted<string>
    readonly now: DateTime.Utc
  }) => Effect.Effect<{ readonly created: boolean }, StorageError>
  /** The account's secrets by name (never their values), sorted by name. */
  readonly secretsOf: (accountId: AccountId) => Effect.Effect<ReadonlyArray<SecretSummary>, StorageError>
  /** The values of those of the named secrets the account keeps (a deploy's, to put in the cluster). */
  readonly secretValues: (
    accountId: AccountId,
    names: ReadonlyArray<SecretName>
  ) => Effect.Effect<ReadonlyMap<SecretName, Redacted.Redacted<string>>, StorageError>
  /** Deletes a secret of the account; `false` when it has none of that name. */
  readonly removeSecret: (accountId: AccountId, name: SecretName) => Effect.Effect<boolean, StorageError>
  /** The user an identity of an OpenID provider (`iss`, `sub`) is linked to, if any. */
  readonly findIdentity: (issuer: string, subject: string) => Effect.Effect<Option.Option<UserId>, StorageError>
  /** Links an identity of an OpenID provider to a user; `false` when it was linked already (nothing changed). */
  readonly linkIdentity: (input: {
    readonly issuer: string
    readonly subject: string
    readonly user_id: UserId
    readonly email: Option.Option<string>
    readonly now: DateTime.Utc
  }) => Effect.Effect<boolean, StorageError>
  readonly membershipsOf: (userId: UserId) => Effect.Effect<ReadonlyArray<Membership>, StorageError>
  readonly membersOf: (accountId: AccountId) => Effect.Effect<ReadonlyArray<Member>, StorageError>
}>() {}
