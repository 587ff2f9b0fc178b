import { Context, type DateTime, Effect, type Option } from "effect"
import type { Account, Member, Membership, User } from "../model/Account.js"
import type { StorageError } from "../model/Errors.js"
import type { AccountId, AccountName, Role, UserId } from "../model/Ids.js"

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
