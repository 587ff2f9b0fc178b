/**
 * Bearer-token authentication for the routes that need a caller.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Principal } from "@hosting/core"
import { Unauthorized } from "./ApiErrors.js"

/** Requires `Authorization: Bearer <token>` and provides the caller as CurrentPrincipal. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@hosting/api/Authentication", {
  failure: Unauthorized,
  provides: Principal.CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
