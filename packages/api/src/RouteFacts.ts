/**
 * Facts about a route that the server acts on, kept as annotations on the
 * endpoint where it is defined (`.annotate(RouteFacts.BodyLimit, 16 * KiB)`),
 * so that no other place lists routes. The server reads them from the
 * definition (`@hosting/http`'s `ApiRoutes`); the OpenAPI document does not
 * show them (docs/decisions.md).
 */
import type { Token } from "@hosting/core"
import { Context } from "effect"

export const KiB = 1024

/**
 * The largest request body a route accepts: a number of bytes (never more
 * than the server-wide limit, HOSTING_MAX_BODY_BYTES in the example server),
 * `"server"` for the server-wide limit itself (routes that carry documents),
 * or `"streamed"` for a route whose handler reads the body as a stream and
 * limits it itself (a file upload, limited by the size reserved for the
 * file). Every route other than GET takes a decision; a route without one
 * (a GET, a route an embedder adds) gets the server-wide limit.
 */
export type BodyLimitValue = number | "server" | "streamed"

/** The annotation key of a route's body limit. */
export class BodyLimit extends Context.Tag("@hosting/api/RouteFacts/BodyLimit")<BodyLimit, BodyLimitValue>() {}

/**
 * How many requests one call of a route counts as against the rate limits:
 * 1 unless the endpoint says otherwise, 0 for a route that is never charged
 * (and so never refused). A route that costs the server much more than a
 * read may count as several.
 */
export class RateCharge extends Context.Tag("@hosting/api/RouteFacts/RateCharge")<RateCharge, number>() {}

/** The charge of a route without a decision. */
export const defaultRateCharge = 1

/**
 * The scope a token needs for a route that needs a caller (`Token.Scope`):
 * `read` for a GET unless the endpoint says otherwise; every other such
 * route takes a decision. A credential without a scope list (a browser
 * session, a token made without limits) has every scope.
 */
export class RequiredScope extends Context.Tag("@hosting/api/RouteFacts/RequiredScope")<RequiredScope, Token.Scope>() {}

/** The scope of a route that needs a caller and has no decision: reads need `read`. */
export const defaultScope = (method: string): Token.Scope | undefined => method === "GET" || method === "HEAD" ? "read" : undefined
