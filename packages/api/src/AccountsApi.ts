/**
 * The caller's profile and accounts.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Account, Ids, Text } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Forbidden, NotFound } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB } from "./RouteFacts.js"

const account = HttpApiSchema.param("account", Ids.AccountName)

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
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(RenameRequest)
      .addSuccess(RenameResponse)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Rename an account (owner or admin)")
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
