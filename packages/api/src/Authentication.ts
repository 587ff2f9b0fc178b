/**
 * Authentication for the routes that need a caller: a bearer token, or the
 * browser session cookie (with a CSRF header on state-changing requests).
 */
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Principal } from "@hosting/core"
import { Schema } from "effect"
import { Forbidden, Unauthorized } from "./ApiErrors.js"
import { cookieName } from "./SessionApi.js"

/**
 * Requires `Authorization: Bearer <token>` or the session cookie, and provides
 * the caller as CurrentPrincipal. A cookie request other than GET/HEAD
 * without the session's `X-CSRF-Token` is refused with 403.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@hosting/api/Authentication", {
  failure: Schema.Union(Unauthorized, Forbidden),
  provides: Principal.CurrentPrincipal,
  security: {
    bearer: HttpApiSecurity.bearer,
    cookie: HttpApiSecurity.apiKey({ in: "cookie", key: cookieName })
  }
}) {}
