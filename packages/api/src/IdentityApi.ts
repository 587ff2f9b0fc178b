/**
 * Setting up an instance (its first user, with the setup code the server
 * printed at start) and personal access tokens (made, listed and revoked by
 * their user).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Text, Token } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, Conflict, Forbidden, NotFound } from "./ApiErrors.js"
import { Authentication } from "./Authentication.js"
import { BodyLimit, KiB, RequiredScope } from "./RouteFacts.js"

const tokenId = HttpApiSchema.param("tokenId", Text.Text.pipe(Schema.minLength(1), Schema.maxLength(100)))

export const SetupRequest = Schema.Struct({
  /** The code the server printed at start (case and separators do not matter). */
  code: Text.Text.pipe(Schema.minLength(1), Schema.maxLength(100)),
  /** The first user's id, used in paths (`/accounts/{account}/members/{user}`). */
  user_id: Ids.UserId,
  /** The first user's display name (default: the id). */
  name: Schema.optional(Text.Text.pipe(Schema.minLength(1), Schema.maxLength(200)))
})

export const SetupResponse = Schema.Struct({
  user: Schema.Struct({ id: Ids.UserId, name: Schema.String, instance_admin: Schema.Boolean }),
  /** A personal access token with every scope and no expiry, shown this once. */
  token: Schema.String,
  token_id: Schema.String
})

export const CreateTokenRequest = Schema.Struct({
  name: Text.Text.pipe(Schema.minLength(1), Schema.maxLength(100)),
  scopes: Schema.Array(Token.Scope).pipe(Schema.minItems(1), Schema.maxItems(5)),
  /** Seconds until the token expires: at least a minute, at most 366 days (default 30 days). */
  expires_in: Schema.optional(Schema.Int.pipe(Schema.between(60, 366 * 24 * 3600))),
  /** The accounts the token may reach, by name (default: every account of its user, as they come and go). */
  accounts: Schema.optional(Schema.Array(Ids.AccountName).pipe(Schema.minItems(1), Schema.maxItems(100)))
})

/** A personal access token, never with its secret. */
export const TokenView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  scopes: Schema.Array(Token.Scope),
  /** null: every account of its user. */
  accounts: Schema.NullOr(Schema.Array(Ids.AccountName)),
  created_at: Schema.DateTimeUtc,
  expires_at: Schema.NullOr(Schema.DateTimeUtc),
  last_used_at: Schema.NullOr(Schema.DateTimeUtc)
})

export const CreateTokenResponse = Schema.Struct({
  ...TokenView.fields,
  /** The secret, shown this once: the server keeps only its hash. */
  token: Schema.String
})

export const TokensResponse = Schema.Struct({ tokens: Schema.Array(TokenView) })

export const RevokeTokenResponse = Schema.Struct({ message: Schema.String, id: Schema.String })

export class SetupApi extends HttpApiGroup.make("setup")
  .add(
    HttpApiEndpoint.post("complete", "/setup")
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(SetupRequest)
      .addSuccess(SetupResponse, { status: 201 })
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Make the first user of a new instance with the setup code the server printed")
      .annotate(
        OpenApi.Description,
        "Only while the instance has no user: a server that starts with none prints a one-time setup code (and " +
          "writes it to its setup-code file). The first user administers the instance and gets a token with every " +
          "scope. A wrong code is 403 `invalid_setup_code`; once a user exists, 409 `setup_done`."
      )
  )
  .annotate(OpenApi.Title, "Setup")
  .annotate(OpenApi.Description, "The first start of an instance")
{}

export class TokensApi extends HttpApiGroup.make("tokens")
  .add(
    HttpApiEndpoint.post("create", "/tokens")
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .setPayload(CreateTokenRequest)
      .addSuccess(CreateTokenResponse, { status: 201 })
      .addError(BadRequest)
      .annotate(OpenApi.Summary, "Make a personal access token; its secret is shown only in this answer")
      .annotate(
        OpenApi.Description,
        "Scopes: `read` (every read), `chat` (conversations and files), `publish` (register and publish builds), " +
          "`deploy` (deploy, undeploy, report traces), `admin` (accounts, members, tokens). A token reaches no " +
          "further than the credential that makes it."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/tokens")
      .addSuccess(TokensResponse)
      .annotate(OpenApi.Summary, "The caller's personal access tokens, newest first, with their last use")
  )
  .add(
    HttpApiEndpoint.del("revoke")`/tokens/${tokenId}`
      .annotate(RequiredScope, "admin")
      .annotate(BodyLimit, 16 * KiB)
      .addSuccess(RevokeTokenResponse)
      .addError(BadRequest)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Revoke one of the caller's personal access tokens")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Tokens")
  .annotate(OpenApi.Description, "Personal access tokens for scripts and CI")
{}
