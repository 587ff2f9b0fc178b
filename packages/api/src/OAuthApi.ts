/**
 * Sign-in for command-line clients: the OAuth 2.0 device authorization grant
 * (RFC 8628), token revocation (RFC 7009), the authorization server metadata
 * (RFC 8414), and the small approval page at `verification_uri`.
 * Requests are form-encoded, as the RFCs ask; answers are JSON (the page, HTML).
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Text } from "@hosting/core"
import { Schema } from "effect"
import { BadRequest, OAuthError } from "./ApiErrors.js"
import { BodyLimit, KiB } from "./RouteFacts.js"

const html = HttpApiSchema.Text({ contentType: "text/html" })

type Operation = Record<string, any>

/**
 * Documents the HTML pages a page route answers with besides its success:
 * the platform gives one schema per status, while these routes answer a
 * form error as a page (and a malformed form as the JSON error body).
 */
const htmlAnswers = (pages: Record<number, string>) => (operation: Operation): Operation => {
  const responses: Operation = { ...operation["responses"] }
  for (const [status, description] of Object.entries(pages)) {
    const current: Operation = responses[status] ?? { description }
    responses[status] = {
      ...current,
      description: current["content"] === undefined ? description : `${current["description"]}; or ${description}`,
      content: { ...current["content"], "text/html": { schema: { type: "string" } } }
    }
  }
  return { ...operation, responses }
}

/** The grant type of RFC 8628. */
export const deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code" as const

export const DeviceCodeRequest = Schema.Struct({
  client_id: Text.Text.pipe(Schema.minLength(1), Schema.maxLength(200)),
  scope: Schema.optional(Text.Text.pipe(Schema.maxLength(500)))
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

export const DeviceCodeResponse = Schema.Struct({
  device_code: Schema.String,
  user_code: Schema.String,
  verification_uri: Schema.String,
  verification_uri_complete: Schema.String,
  expires_in: Schema.Int,
  interval: Schema.Int
})

export const TokenRequest = Schema.Struct({
  grant_type: Text.Text.pipe(Schema.maxLength(200)),
  device_code: Schema.optional(Text.Text.pipe(Schema.maxLength(500))),
  client_id: Schema.optional(Text.Text.pipe(Schema.maxLength(200)))
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  scope: Schema.optional(Schema.String)
})

export const RevokeRequest = Schema.Struct({
  token: Text.Text.pipe(Schema.maxLength(500)),
  token_type_hint: Schema.optional(Text.Text.pipe(Schema.maxLength(100))),
  client_id: Schema.optional(Text.Text.pipe(Schema.maxLength(200)))
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

export const Metadata = Schema.Struct({
  issuer: Schema.String,
  device_authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  revocation_endpoint: Schema.String,
  grant_types_supported: Schema.Array(Schema.String),
  response_types_supported: Schema.Array(Schema.String),
  token_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  revocation_endpoint_auth_methods_supported: Schema.Array(Schema.String)
})

/** Sign-in on the approval page with a platform token; `user_code` carries the code being approved. */
export const SessionRequest = Schema.Struct({
  token: Text.Text.pipe(Schema.maxLength(500)),
  user_code: Schema.optional(Text.Text.pipe(Schema.maxLength(20)))
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

/** The approval form; `csrf` is the value the page put in the form. */
export const DecisionRequest = Schema.Struct({
  user_code: Text.Text.pipe(Schema.maxLength(20)),
  decision: Schema.Literal("approve", "deny"),
  csrf: Text.Text.pipe(Schema.maxLength(200))
}).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" }))

export class OAuthApi extends HttpApiGroup.make("oauth")
  .add(
    HttpApiEndpoint.post("deviceCode")`/oauth/device/code`
      // OAuth form posts: a token of at most 4,096 characters and a few short fields.
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(DeviceCodeRequest)
      .addSuccess(DeviceCodeResponse)
      .addError(OAuthError)
      .annotate(OpenApi.Summary, "Start a device login (RFC 8628 device authorization request)")
  )
  .add(
    HttpApiEndpoint.post("token")`/oauth/token`
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(TokenRequest)
      .addSuccess(TokenResponse)
      .addError(OAuthError)
      .annotate(
        OpenApi.Summary,
        "Poll for the access token of a device login: authorization_pending, slow_down, expired_token, access_denied, then the token"
      )
  )
  .add(
    HttpApiEndpoint.post("revoke")`/oauth/revoke`
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(RevokeRequest)
      .addSuccess(Schema.Struct({}))
      .addError(OAuthError)
      .annotate(OpenApi.Summary, "Revoke an access token (RFC 7009): 200 whether or not it was valid")
  )
  .add(
    HttpApiEndpoint.get("metadata")`/.well-known/oauth-authorization-server`
      .addSuccess(Metadata)
      .annotate(OpenApi.Summary, "Authorization server metadata (RFC 8414)")
  )
  .add(
    HttpApiEndpoint.get("devicePage")`/device`
      .setUrlParams(Schema.Struct({ user_code: Schema.optional(Text.Text.pipe(Schema.maxLength(20))) }))
      .addSuccess(html)
      .annotate(OpenApi.Summary, "The approval page of device logins (verification_uri)")
  )
  .add(
    HttpApiEndpoint.post("deviceSession")`/device/session`
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(SessionRequest)
      .addSuccess(html)
      .addError(BadRequest)
      .annotate(OpenApi.Summary, "Sign in on the approval page with a platform token (sets an HttpOnly session cookie)")
      .annotate(OpenApi.Transform, htmlAnswers({
        401: "The sign-in form again: the token is not valid or has expired",
        403: "Refused: the form was sent from another origin"
      }))
  )
  .add(
    HttpApiEndpoint.post("deviceDecision")`/device`
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(DecisionRequest)
      .addSuccess(html)
      .addError(BadRequest)
      .annotate(OpenApi.Summary, "Approve or deny a device login (signed-in users; form with its CSRF value)")
      .annotate(OpenApi.Transform, htmlAnswers({
        400: "The page naming what is wrong with the code (unknown, already decided or expired)",
        401: "The sign-in form: the page's session has ended",
        403: "Refused: the form was sent from another origin or without the session's CSRF value"
      }))
  )
  .annotate(OpenApi.Title, "Device login")
  .annotate(OpenApi.Description, "OAuth 2.0 device authorization (RFC 8628), token revocation (RFC 7009), metadata (RFC 8414) and the approval page")
{}

/** RFC 8414 metadata at the root, with the issuer's path inserted (`/.well-known/oauth-authorization-server/api/v1`). */
export class WellKnownApi extends HttpApiGroup.make("wellKnown")
  .add(
    HttpApiEndpoint.get("metadata")`/.well-known/oauth-authorization-server/api/v1`
      .addSuccess(Metadata)
      .annotate(OpenApi.Summary, "Authorization server metadata (RFC 8414, path inserted)")
  )
  .annotate(OpenApi.Title, "Discovery")
  .annotate(OpenApi.Description, "The authorization server metadata where RFC 8414 derives it from the issuer")
{}
