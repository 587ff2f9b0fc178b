/**
 * The errors of accounts and who may act in them: account names, users and
 * members, invitations, setting up an instance, personal access tokens.
 * Part of the domain's errors (Errors.ts re-exports them).
 */
import { Schema } from "effect"

/** The account name is already used by another account. */
export class AccountNameTaken extends Schema.TaggedError<AccountNameTaken>()("AccountNameTaken", {
  name: Schema.String
}) {
  readonly code = "account_name_taken"
  override get message() {
    return `The account name ${this.name} is already taken.`
  }
}

/** An account cannot be created: its name is already taken (409, where a rename answers 400). */
export class AccountExists extends Schema.TaggedError<AccountExists>()("AccountExists", {
  name: Schema.String
}) {
  readonly code = "account_name_taken"
  override get message() {
    return `The account name ${this.name} is already taken; choose another.`
  }
}

/** No user has that id. */
export class UserNotFound extends Schema.TaggedError<UserNotFound>()("UserNotFound", {
  user: Schema.String
}) {
  readonly code = "user_not_found"
  override get message() {
    return `User ${this.user} does not exist.`
  }
}

/** The user is not a member of the account. */
export class MemberNotFound extends Schema.TaggedError<MemberNotFound>()("MemberNotFound", {
  account: Schema.String,
  user: Schema.String
}) {
  readonly code = "member_not_found"
  override get message() {
    return `User ${this.user} is not a member of account ${this.account}.`
  }
}

/** The setup code is not one this instance issued, or it was spent. */
export class SetupCodeInvalid extends Schema.TaggedError<SetupCodeInvalid>()("SetupCodeInvalid", {}) {
  readonly code = "invalid_setup_code"
  override get message() {
    return "The setup code is not valid: use the code the server printed at its last start (it also wrote it to its setup-code file)."
  }
}

/** The instance has users already: setting it up again is refused. */
export class SetupDone extends Schema.TaggedError<SetupDone>()("SetupDone", {}) {
  readonly code = "setup_done"
  override get message() {
    return "This instance is set up already; sign in, or ask an account owner for an invitation."
  }
}

/** The caller has no personal access token with that id. */
export class TokenNotFound extends Schema.TaggedError<TokenNotFound>()("TokenNotFound", {
  id: Schema.String
}) {
  readonly code = "token_not_found"
  override get message() {
    return `You have no personal access token with id ${this.id}.`
  }
}

/** No invitation with that code (or id) waits: it was taken, withdrawn, expired, or never made. */
export class InvitationNotFound extends Schema.TaggedError<InvitationNotFound>()("InvitationNotFound", {}) {
  readonly code = "invitation_not_found"
  override get message() {
    return "No invitation waits under that code: it was used, withdrawn or expired. Ask for a new one."
  }
}

/** The invitee belongs to the account already. */
export class AlreadyMember extends Schema.TaggedError<AlreadyMember>()("AlreadyMember", {
  account: Schema.String,
  role: Schema.String
}) {
  readonly code = "already_member"
  override get message() {
    return `You are a member of ${this.account} already (${this.role}); the invitation stays for someone else to use.`
  }
}

/** The account cannot be deleted while deployments run: its own, or other accounts' of its agents. */
export class AccountBusy extends Schema.TaggedError<AccountBusy>()("AccountBusy", {
  account: Schema.String,
  deployments: Schema.Array(Schema.String)
}) {
  readonly code = "account_busy"
  override get message() {
    const shown = this.deployments.slice(0, 5).join(", ")
    const more = this.deployments.length > 5 ? ` and ${this.deployments.length - 5} more` : ""
    return `Account ${this.account} cannot be deleted while deployments of it or of its agents run (${shown}${more}); undeploy them first.`
  }
}

/** The change would leave the account without an owner. */
export class LastOwner extends Schema.TaggedError<LastOwner>()("LastOwner", {
  account: Schema.String,
  user: Schema.String
}) {
  readonly code = "last_owner"
  override get message() {
    return `${this.user} is the last owner of account ${this.account}; make another member an owner first.`
  }
}
