/**
 * Accounts, users and memberships.
 */
import { Schema } from "effect"
import { AccountId, AccountName, Role, UserId } from "./Ids.js"

/** An account: the owner of agents and deployments. Its name is the slug used in paths. */
export class Account extends Schema.Class<Account>("Account")({
  id: AccountId,
  name: AccountName,
  created_at: Schema.DateTimeUtc
}) {}

/** A person (or machine user) who calls the API. */
export class User extends Schema.Class<User>("User")({
  id: UserId,
  name: Schema.String
}) {}

/** The role a user has in one account. */
export class Membership extends Schema.Class<Membership>("Membership")({
  account_id: AccountId,
  account: AccountName,
  role: Role
}) {}

/** A member of an account, as listed on the account. */
export class Member extends Schema.Class<Member>("Member")({
  user_id: UserId,
  name: Schema.String,
  role: Role
}) {}
