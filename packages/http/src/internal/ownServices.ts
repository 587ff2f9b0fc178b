/**
 * The services a server made for one request alone, before its fiber
 * started (`ApiApp.PrepareContext`), as the middleware in front of the
 * router may use them: while the fiber's context is still that map, a
 * middleware that puts a service in front of the route (a body's limit, a
 * request that reads its JSON more carefully) may set it there instead of
 * providing it, which would copy the whole context and leave the router a
 * context it did not prepare (it would then make the route's context
 * again: docs/performance.md, "One context for a request with a body").
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import type { Context } from "effect"

/** Where the compiled app notes a request's own services, through the global symbol registry (a proxy of the request reads the same). */
const ownKey = Symbol.for("@hosting/http/ownServices")

/** Notes the services made for `request` alone (the compiled app's `PrepareContext` does). */
export const noteOwn = (request: HttpServerRequest.HttpServerRequest, services: Map<string, unknown>): void => {
  ;(request as unknown as Record<symbol, Map<string, unknown>>)[ownKey] = services
}

/**
 * The map of `context` when it is the one made for `request` alone and no
 * one has replaced it since: what may be set in place. Undefined otherwise
 * (a server that prepares nothing, or a middleware before this one that
 * provided a service): then services are provided as usual.
 */
export const ownServices = (
  request: HttpServerRequest.HttpServerRequest,
  context: Context.Context<never>
): Map<string, unknown> | undefined => {
  const own = (request as unknown as Record<symbol, Map<string, unknown> | undefined>)[ownKey]
  return own !== undefined && own === context.unsafeMap ? own : undefined
}
