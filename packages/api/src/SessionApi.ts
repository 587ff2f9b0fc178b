/**
 * Browser sessions for the dashboard. A browser cannot put a bearer token on
 * an EventSource, so it signs in once with a token and gets an HttpOnly,
 * SameSite=Strict cookie that every route accepts. Requests other than
 * GET/HEAD that ride on the cookie carry the session's CSRF value in the
 * `X-CSRF-Token` header.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Text } from "@hosting/core"
import { Schema } from "effect"
import { Forbidden, Unauthorized } from "./ApiErrors.js"
import { BodyLimit, KiB } from "./RouteFacts.js"

/** Name of the session cookie (also used by the device approval page). */
export const cookieName = "hosting_session" as const

/** Header carrying the CSRF value on state-changing requests made with the cookie. */
export const csrfHeader = "x-csrf-token" as const

/** Sign-in: a platform token, or an access token from a device login. */
export const SignInRequest = Schema.Struct({
  token: Text.Text.pipe(Schema.minLength(1), Schema.maxLength(4096))
})

/** The signed-in user and the CSRF value to send with state-changing requests. */
export const BrowserSession = Schema.Struct({
  user: Schema.Struct({ id: Schema.String, name: Schema.String }),
  csrf: Schema.String,
  /** Seconds until the session ends; given at sign-in. */
  expires_in: Schema.optional(Schema.Int)
})
export type BrowserSession = typeof BrowserSession.Type

export class SessionApi extends HttpApiGroup.make("session")
  .add(
    HttpApiEndpoint.post("signIn")`/session`
      // A token of at most 4,096 characters.
      .annotate(BodyLimit, 8 * KiB)
      .setPayload(SignInRequest)
      .addSuccess(BrowserSession)
      .addError(Unauthorized)
      .addError(Forbidden)
      .annotate(
        OpenApi.Summary,
        "Start a browser session with a token: sets the HttpOnly session cookie and returns the CSRF value"
      )
  )
  .add(
    HttpApiEndpoint.get("current")`/session`
      .addSuccess(BrowserSession)
      .addError(Unauthorized)
      .annotate(OpenApi.Summary, "The browser session of the cookie: its user and CSRF value; 401 when there is none")
  )
  .add(
    HttpApiEndpoint.del("signOut")`/session`
      .annotate(BodyLimit, 8 * KiB)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "End the browser session (needs X-CSRF-Token) and clear the cookie")
  )
  .annotate(OpenApi.Title, "Browser session")
  .annotate(OpenApi.Description, "The dashboard's sign-in: an HttpOnly session cookie that every route accepts, with a CSRF value")
{}
