/**
 * The caller's profile and accounts.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Account, Audit, Ids, Secret, Text } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { pageFields } from "./Paging.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const account = HttpApiSchema.param("account", Ids.AccountName)
const user = HttpApiSchema.param("user", Ids.UserId)
const invitationId = HttpApiSchema.param("invitationId", Text.Text.pipe(Schema.minLength(1), Schema.maxLength(100)))
const invitationCode = HttpApiSchema.param("code", Text.Text.pipe(Schema.minLength(1), Schema.maxLength(200)))
const secret = HttpApiSchema.param("secret", Secret.SecretName)

export const MeResponse = Schema.Struct({
  user: Schema.Struct({ id: Schema.String, name: Schema.String }),
  accounts: Schema.Array(Schema.Struct({ name: Ids.AccountName, role: Ids.Role }))
})

export const AccountResponse = Schema.Struct({
  name: Ids.AccountName,
  created_at: Schema.DateTimeUtc,
  role: Ids.Role,
  members: Schema.Array(Account.Member)
})

export const RenameRequest = Schema.Struct({ name: Ids.AccountName })

export const RenameResponse = Schema.Struct({ message: Schema.String, name: Ids.AccountName })

export const DeleteAccountResponse = Schema.Struct({ message: Schema.String, name: Ids.AccountName })

export const CreateAccountRequest = Schema.Struct({ name: Ids.AccountName })

export const CreateAccountResponse = Schema.Struct({ name: Ids.AccountName, created_at: Schema.DateTimeUtc, role: Ids.Role })

export const MembersResponse = Schema.Struct({ members: Schema.Array(Account.Member) })

export const SetMemberRequest = Schema.Struct({ role: Ids.Role })

export const SetMemberResponse = Schema.Struct({
  user_id: Ids.UserId,
  name: Schema.String,
  role: Ids.Role,
  /** True when the user was not a member before. */
  added: Schema.Boolean
})

export const RemoveMemberResponse = Schema.Struct({ message: Schema.String, user_id: Ids.UserId })

export const InviteRequest = Schema.Struct({
  role: Ids.Role,
  /** Whom the invitation is meant for, shown with it (any signed-in user holding the code may accept it). */
  email: Schema.optional(Text.Text.pipe(Schema.pattern(/^[^\s@]+@[^\s@]+$/), Schema.maxLength(320)))
})

/** An invitation waiting for its invitee (never its code). */
export const InvitationView = Schema.Struct({
  id: Schema.String,
  account: Ids.AccountName,
  email: Schema.NullOr(Schema.String),
  role: Ids.Role,
  created_by: Ids.UserId,
  created_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc
})

export const InviteResponse = Schema.Struct({
  ...InvitationView.fields,
  /** The one-time code, shown only in this answer. */
  code: Schema.String,
  /** The dashboard's page that accepts it (the code in its path). */
  url: Schema.String
})

export const InvitationsResponse = Schema.Struct({ invitations: Schema.Array(InvitationView) })

export const WithdrawResponse = Schema.Struct({ message: Schema.String, id: Schema.String })

export const AcceptResponse = Schema.Struct({ message: Schema.String, account: Ids.AccountName, role: Ids.Role })

export const AuditParams = Schema.Struct(pageFields("Entries", Audit.maxPageSize, Audit.defaultPageSize))

export const AuditEntry = Schema.Struct({
  id: Schema.Int,
  at: Schema.DateTimeUtc,
  /** The user who did it. */
  actor: Ids.UserId,
  action: Audit.AuditAction,
  target: Schema.String,
  details: Schema.String
})

export const AuditPage = Schema.Struct({
  entries: Schema.Array(AuditEntry),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
})

/** A secret's value: write-only, never answered. */
export const SetSecretRequest = Schema.Struct({ value: Secret.SecretValue })

export const SetSecretResponse = Schema.Struct({
  name: Secret.SecretName,
  /** True when the account had no secret of that name before. */
  created: Schema.Boolean,
  updated_at: Schema.DateTimeUtc
})

export const SecretsResponse = Schema.Struct({ secrets: Schema.Array(Secret.SecretSummary) })

export const DeleteSecretResponse = Schema.Struct({ message: Schema.String, name: Secret.SecretName })

export const EventsParams = Schema.Struct({ last_event_id: Schema.optional(Text.Text.pipe(Schema.maxLength(64))) })

export const EventsHeaders = Schema.Struct({ "last-event-id": Schema.optional(Text.Text.pipe(Schema.maxLength(64))) })

/** The body of a server-sent event stream, for the OpenAPI document. */
export const EventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
)

export class AccountsApi extends HttpApiGroup.make("accounts")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(MeResponse)
      .annotate(OpenApi.Summary, "The current user and their accounts")
  )
  .add(
    HttpApiEndpoint.get("get")`/accounts/${account}`
      .addSuccess(AccountResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "An account and its members (members only)")
  )
  .add(
    HttpApiEndpoint.put("rename")`/accounts/${account}`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(RenameRequest)
      .addSuccess(RenameResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Rename an account (owner or admin)")
  )
  .add(
    HttpApiEndpoint.del("remove")`/accounts/${account}`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(DeleteAccountResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Delete an account and everything of it (owners)")
      .annotate(
        OpenApi.Description,
        "Its members, invitations and audit log; its agents and builds; every deployment by it or of its agents, " +
          "with their conversations, files and traces. Refused with 409 `account_busy` while any of those " +
          "deployments runs."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/accounts")
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(CreateAccountRequest)
      .addSuccess(CreateAccountResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Create an account; the caller becomes its owner")
      .annotate(OpenApi.Description, "Account names follow the slug rules of a rename. A name already taken answers 409 `account_name_taken`.")
  )
  .add(
    HttpApiEndpoint.get("members")`/accounts/${account}/members`
      .addSuccess(MembersResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The members of an account and their roles (members only)")
  )
  .add(
    HttpApiEndpoint.put("setMember")`/accounts/${account}/members/${user}`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(SetMemberRequest)
      .addSuccess(SetMemberResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Give a user a role in the account, adding them when they are not a member")
      .annotate(
        OpenApi.Description,
        "Owners give any role; admins add members and manage members only. The last owner cannot be given " +
          "another role (409 `last_owner`). An unknown user answers 404 `user_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.del("removeMember")`/accounts/${account}/members/${user}`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(RemoveMemberResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Remove a member from the account")
      .annotate(
        OpenApi.Description,
        "Owners remove anyone, admins remove members, and any member may remove themself. The last owner " +
          "cannot leave (409 `last_owner`)."
      )
  )
  .add(
    HttpApiEndpoint.post("invite")`/accounts/${account}/invitations`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(InviteRequest)
      .addSuccess(InviteResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Invite someone to the account: a one-time code and link, valid for 7 days")
      .annotate(OpenApi.Description, "Owners invite with any role, admins with the role member.")
  )
  .add(
    HttpApiEndpoint.get("invitations")`/accounts/${account}/invitations`
      .addSuccess(InvitationsResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The account's invitations still waiting (owners and admins)")
  )
  .add(
    HttpApiEndpoint.del("withdraw")`/accounts/${account}/invitations/${invitationId}`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(WithdrawResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Withdraw an invitation (owners and admins)")
  )
  .add(
    HttpApiEndpoint.post("accept")`/invitations/${invitationCode}/accept`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(AcceptResponse)
      .addError(BadRequest)
      .addError(NotFound)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Accept an invitation: join its account with its role")
      .annotate(
        OpenApi.Description,
        "Any signed-in user holding the code. A used, withdrawn or expired code is 404 `invitation_not_found`; " +
          "a member of the account already is 409 `already_member` (the invitation stays)."
      )
  )
  .add(
    HttpApiEndpoint.get("audit")`/accounts/${account}/audit`
      .setUrlParams(AuditParams)
      .addSuccess(AuditPage)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The account's audit log, newest first (owners and admins)")
      .annotate(
        OpenApi.Description,
        "Who did what and when: account creation and rename, members and roles, invitations, tokens that reach " +
          "the account, publishing and deploying. Paged with `limit` and `offset`, as traces are."
      )
  )
  .add(
    HttpApiEndpoint.get("secrets")`/accounts/${account}/secrets`
      .addSuccess(SecretsResponse)
      .addError(BadRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "The account's secrets: names and times, never values (members)")
      .annotate(
        OpenApi.Description,
        "Sorted by name. No route ever answers a secret's value. To anyone who is not a member the account has " +
          "none to show: 404 `account_not_found`, as for an account that does not exist."
      )
  )
  .add(
    HttpApiEndpoint.put("setSecret")`/accounts/${account}/secrets/${secret}`
      .annotate(RequiredScope, "deploy")
      .annotate(BodyLimit, 512 * KiB)
      .setPayload(SetSecretRequest)
      .addSuccess(SetSecretResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Set a secret of the account: create it or replace its value (owners and admins)")
      .annotate(
        OpenApi.Description,
        "The name is environment-variable style (`^[A-Z_][A-Z0-9_]{0,127}$`); the value 1 byte to 64 KiB of text " +
          "without NUL. Write-only: the answer, the audit log and the events name the secret, never its value. A " +
          "deployment reads it at deploy (`{ secret: NAME }` in the spec's `env` or in the deploy's `env`): changing " +
          "a secret changes no running deployment until it is deployed again."
      )
  )
  .add(
    HttpApiEndpoint.del("removeSecret")`/accounts/${account}/secrets/${secret}`
      .annotate(RequiredScope, "deploy")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(DeleteSecretResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Delete a secret of the account (owners and admins)")
      .annotate(
        OpenApi.Description,
        "404 `secret_not_found` when the account has no secret of that name. Running deployments keep the value " +
          "they were deployed with; a later deploy that refers to it fails with 409 `secret_missing`."
      )
  )
  .add(
    HttpApiEndpoint.get("events")`/accounts/${account}/events`
      .setUrlParams(EventsParams)
      .setHeaders(EventsHeaders)
      .addSuccess(EventStream)
      .addError(BadRequest)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "Server-sent stream of the account's build changes (members only)")
      .annotate(
        OpenApi.Description,
        "Events: `ready` first (data `{ resync }`), then `agent.build` and `deployment.changed` with an `id`, and " +
          "`heartbeat` every 25 s. Resume with the `Last-Event-ID` header or the `last_event_id` query parameter."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Accounts")
  .annotate(OpenApi.Description, "The caller's profile, accounts and members, renames, and the account's server-sent event stream")
{}
