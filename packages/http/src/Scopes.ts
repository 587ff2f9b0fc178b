/**
 * The scope each route needs of a token (`RouteFacts.RequiredScope` on its
 * endpoint, `read` for a GET without one), and the check the Authentication
 * middleware makes with it. A credential without a scope list (a browser
 * session, a fixture or device token made without one) passes every check;
 * a limited token calling beyond its scopes is refused with 403
 * `insufficient_scope` (RFC 6750's name) naming the scope it lacks.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpRouter from "@effect/platform/HttpRouter"
import { ApiErrors, RouteFacts } from "@hosting/api"
import { type Principal, Token } from "@hosting/core"
import { Context, Effect, Option } from "effect"
import * as ApiRoutes from "./ApiRoutes.js"

/** The scope a route needs: its decision, else `read` for a GET; undefined for a route that took none. */
export const declared = (route: ApiRoutes.Route): Token.Scope | undefined =>
  Option.getOrElse(Context.getOption(route.annotations, RouteFacts.RequiredScope), () => RouteFacts.defaultScope(route.method))

const tables = new WeakMap<ReadonlyArray<ApiRoutes.Route>, ReadonlyMap<string, Token.Scope | undefined>>()

/** Scopes by `METHOD path` (the path as the router keeps it), built once per list of routes. */
const tableOf = (routes: ReadonlyArray<ApiRoutes.Route>): ReadonlyMap<string, Token.Scope | undefined> => {
  const known = tables.get(routes)
  if (known !== undefined) return known
  const table = new Map(routes.map((route) => [`${route.method} ${route.path}`, declared(route)]))
  tables.set(routes, table)
  return table
}

/**
 * The scopes a request to a route needs: the route's decision; for a route
 * the API does not declare (one an embedder serves beside it), `read` for a
 * GET and every scope otherwise, so that a limited token never reaches a
 * write nobody classified.
 */
export const requiredFor = (routes: ReadonlyArray<ApiRoutes.Route>, method: string, path: string): ReadonlyArray<Token.Scope> => {
  const table = tableOf(routes)
  const key = `${method === "HEAD" ? "GET" : method} ${path}`
  const scope = table.has(key) ? table.get(key) : RouteFacts.defaultScope(method)
  return scope === undefined ? Token.allScopes : [scope]
}

/** The 403 of a token without a scope the route needs. */
export const insufficient = (missing: ReadonlyArray<Token.Scope>, method: string, path: string) =>
  new ApiErrors.Forbidden({
    error: "insufficient_scope",
    details: `This token lacks the ${missing.join(", ")} scope${missing.length > 1 ? "s" : ""} that ${method} ${path} needs; ` +
      `make a token with ${missing.length > 1 ? "them" : "it"} (hosting tokens create --scope ${missing[0]}).`
  })

/**
 * Refuses a principal whose token lacks the scope of the route being served
 * (read from the router's context); a principal without a scope list passes
 * at once.
 */
export const check = (principal: Principal.Principal): Effect.Effect<Principal.Principal, ApiErrors.Forbidden> =>
  principal.scopes === undefined ? Effect.succeed(principal) : Effect.flatMap(
    Effect.all([Effect.serviceOption(HttpRouter.RouteContext), Effect.serviceOption(HttpApi.Api)]),
    ([route, api]) => {
      if (Option.isNone(route)) return Effect.succeed(principal)
      const routes = Option.match(api, { onNone: () => ApiRoutes.routes, onSome: ({ api }) => ApiRoutes.routesOf(api) })
      const { method, path } = route.value.route
      const required = requiredFor(routes, method === "*" ? "GET" : method, path)
      const missing = required.filter((scope) => !principal.scopes!.includes(scope))
      return missing.length === 0 ? Effect.succeed(principal) : Effect.fail(insufficient(missing, method, path))
    }
  )
