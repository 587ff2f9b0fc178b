/**
 * How people sign in: the methods this server offers (for the dashboard's
 * sign-in page), and single sign-on through an OpenID provider
 * (authorization code flow with PKCE): `login` sends the browser to the
 * provider, the provider sends it back to `callback`, which starts a browser
 * session and returns to the page the sign-in began on.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Text } from "@hosting/core"
import { Schema } from "effect"
import { NotFound } from "./ApiErrors.js"

const html = HttpApiSchema.Text({ contentType: "text/html" })

export const SignInMethods = Schema.Struct({
  /** A pasted access token (always). */
  token: Schema.Boolean,
  /** A one-time code approved on the server's page (the device flow; always). */
  device: Schema.Boolean,
  /** The instance has no user yet: the setup code makes the first (POST /setup). */
  setup: Schema.Boolean,
  /** Single sign-on, when an OpenID provider is configured: its issuer and where the sign-in starts. */
  oidc: Schema.NullOr(Schema.Struct({ issuer: Schema.String, login_url: Schema.String }))
})

export const LoginParams = Schema.Struct({
  /** Where to go once signed in: a path of this server (default `/`). */
  next: Schema.optional(Text.Text.pipe(Schema.maxLength(2000)))
})

export const CallbackParams = Schema.Struct({
  code: Schema.optional(Text.Text.pipe(Schema.maxLength(4000))),
  state: Schema.optional(Text.Text.pipe(Schema.maxLength(1000))),
  iss: Schema.optional(Text.Text.pipe(Schema.maxLength(2000))),
  session_state: Schema.optional(Text.Text.pipe(Schema.maxLength(2000))),
  error: Schema.optional(Text.Text.pipe(Schema.maxLength(200))),
  error_description: Schema.optional(Text.Text.pipe(Schema.maxLength(2000)))
})

export class SignOnApi extends HttpApiGroup.make("signOn")
  .add(
    HttpApiEndpoint.get("methods")`/session/methods`
      .addSuccess(SignInMethods)
      .annotate(OpenApi.Summary, "How one can sign in here: token, device code, setup code, single sign-on")
  )
  .add(
    HttpApiEndpoint.get("login")`/oidc/login`
      .setUrlParams(LoginParams)
      .addSuccess(HttpApiSchema.Empty(302))
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Start single sign-on: a redirect to the OpenID provider")
      .annotate(OpenApi.Description, "404 `sso_not_configured` when no provider is configured (HOSTING_OIDC_ISSUER).")
  )
  .add(
    HttpApiEndpoint.get("callback")`/oidc/callback`
      .setUrlParams(CallbackParams)
      .addSuccess(html)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Where the OpenID provider returns: starts a browser session, then goes on to the page the sign-in began on")
  )
  .annotate(OpenApi.Title, "Sign-on")
  .annotate(OpenApi.Description, "Sign-in methods and single sign-on")
{}
