/**
 * The largest request body each route accepts, as its endpoint in
 * `@hosting/api` declares it (`RouteFacts.BodyLimit`): routes whose bodies
 * are a few fields take a few kilobytes, the routes that carry documents
 * (agent registration, OTLP exports) take the server-wide limit, and no
 * route takes more than it. A route without a decision (a GET, a route an
 * embedder adds) takes the server-wide limit. File uploads are `"streamed"`:
 * not limited here, their limit is the size reserved for the file.
 */
import { RouteFacts } from "@hosting/api"
import { Context } from "effect"
import * as ApiRoutes from "./ApiRoutes.js"

/** What a route takes: a number of bytes, the server-wide limit, or its own reading of a stream. */
export type RouteLimit = RouteFacts.BodyLimitValue

/** A route's decision, if its endpoint makes one. */
export const declared = (route: ApiRoutes.Route): RouteLimit | undefined =>
  Context.getOrElse(route.annotations, RouteFacts.BodyLimit, () => undefined)

/** The largest body a request to the route may send, never above `serverLimit`; `"streamed"` when its handler limits it. */
export const ofRoute = (route: ApiRoutes.Route, serverLimit: number): number | "streamed" => {
  const limit = declared(route)
  return limit === undefined || limit === "server" ? serverLimit : limit === "streamed" ? limit : Math.min(limit, serverLimit)
}

/**
 * The largest body a request may send: its route's limit (among `routes`,
 * HostingApi's unless an embedder serves more), never above `serverLimit`
 * (HOSTING_MAX_BODY_BYTES in the example server), or `"streamed"` for a
 * route that limits its body itself.
 */
export const limitFor = (
  method: string,
  pathname: string,
  serverLimit: number,
  routes: ReadonlyArray<ApiRoutes.Route> = ApiRoutes.routes
): number | "streamed" => {
  const route = ApiRoutes.matcher(routes).match(method, pathname)
  return route === undefined ? serverLimit : ofRoute(route, serverLimit)
}
