/**
 * The routes of `@hosting/api`, read once from the definition: each
 * endpoint with its full path (the prefix included) and its annotations
 * (`RouteFacts`), and path matchers built from an endpoint's own path. What
 * the server knows about a route comes from here, never from a path or a
 * table written a second time.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import type * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { HostingApi } from "@hosting/api"
import type { Context } from "effect"

export interface Route {
  /** `group.endpoint`, the OpenAPI operationId. */
  readonly id: string
  /** The method in capitals, as requests carry it. */
  readonly method: string
  /** The path as the definition keeps it: the prefix, then segments with `:param` placeholders. */
  readonly path: string
  /** The endpoint's annotations over its group's and the API's. */
  readonly annotations: Context.Context<never>
  /** The middleware of the endpoint and its group (`Authentication` where a caller is needed). */
  readonly middleware: ReadonlySet<HttpApiMiddleware.TagClassAny>
  /** The endpoint with the prefix applied. */
  readonly endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
}

const reflected = new WeakMap<object, ReadonlyArray<Route>>()

/**
 * Every route of an API, in the order of its definition, read once per API:
 * HostingApi, or an API an embedder serves (HostingApi with groups of its
 * own), whose endpoints' facts then hold as well.
 */
export const routesOf = (api: HttpApi.HttpApi.Any): ReadonlyArray<Route> => {
  const known = reflected.get(api)
  if (known !== undefined) return known
  const found: Array<Route> = []
  HttpApi.reflect(api as unknown as HttpApi.HttpApi<string, HttpApiGroup.HttpApiGroup.AnyWithProps>, {
    onGroup: () => undefined,
    onEndpoint: ({ endpoint, group, mergedAnnotations, middleware }) => {
      found.push({
        id: `${group.identifier}.${endpoint.name}`,
        method: endpoint.method,
        path: endpoint.path,
        annotations: mergedAnnotations,
        middleware,
        endpoint: endpoint as unknown as HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
      })
    }
  })
  reflected.set(api, found)
  return found
}

/** Every route of HostingApi, in the order of the definition. */
export const routes: ReadonlyArray<Route> = routesOf(HostingApi.HostingApi as unknown as HttpApi.HttpApi.Any)

/** The route of an endpoint of one of HostingApi's groups (the group as `@hosting/api` exports it). */
export const routeOf = <Group extends HttpApiGroup.HttpApiGroup.Any>(
  group: Group,
  name: HttpApiEndpoint.HttpApiEndpoint.Name<HttpApiGroup.HttpApiGroup.Endpoints<Group>>
): Route => {
  const id = `${(group as unknown as HttpApiGroup.HttpApiGroup.AnyWithProps).identifier}.${name}`
  const route = routes.find((r) => r.id === id)
  if (route === undefined) throw new Error(`HostingApi has no endpoint ${id}`)
  return route
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const isParam = (segment: string) => segment.startsWith(":")

/**
 * A regular expression for a route's path: its static segments as they
 * are, each `:param` as a named group of `segment` (one path segment, any
 * text but `/`, unless told narrower), a trailing slash allowed when asked.
 */
export const pattern = (path: string, options?: { readonly segment?: string; readonly trailingSlash?: boolean }): RegExp => {
  const segment = options?.segment ?? "[^/]+"
  const source = path.split("/").map((part) => {
    return isParam(part) ? `(?<${part.slice(1)}>${segment})` : escape(part)
  }).join("/")
  return new RegExp(`^${source}${options?.trailingSlash === true ? "/?" : ""}$`)
}

/**
 * Orders routes as the router prefers them when several match a path:
 * segment by segment, a static segment before a parameter.
 */
export const bySpecificity = (a: Route, b: Route): number => {
  const left = a.path.split("/")
  const right = b.path.split("/")
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = Number(isParam(left[i]!)) - Number(isParam(right[i]!))
    if (order !== 0) return order
  }
  return 0
}

/**
 * A link to a route for a client: the API's public base URL
 * (`https://host/api/v1`, PublicUrl.baseOf), then the route's path after the
 * prefix with each parameter filled in (escaped).
 */
export const link = (base: string, route: Route, params: Readonly<Record<string, string>> = {}): string =>
  linkTo(route)(base, params)

/** `link` for one route, its path split once: for links made on every answer. */
export const linkTo = (route: Route): (base: string, params?: Readonly<Record<string, string>>) => string => {
  if (!route.path.startsWith(`${HostingApi.basePath}/`)) throw new Error(`${route.id} is not under ${HostingApi.basePath}`)
  const parts = route.path.slice(HostingApi.basePath.length).split("/")
    .map((part) => isParam(part) ? { param: part.slice(1) } : { text: part })
  return (base, params = {}) => {
    let path = ""
    for (const [i, part] of parts.entries()) {
      if (i > 0) path += "/"
      if (part.text !== undefined) {
        path += part.text
        continue
      }
      const value = params[part.param]
      if (value === undefined) throw new Error(`${route.id} needs the parameter ${part.param}`)
      path += encodeURIComponent(value)
    }
    return `${base}${path}`
  }
}

/** The path of a request target, without its query or fragment. */
export const pathOf = (target: string): string => {
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}

/** Finds the route of a request, as the router would choose it. */
export interface Matcher {
  /** The route of a method and a path (no query; a trailing slash allowed), if one matches. */
  readonly match: (method: string, pathname: string) => Route | undefined
}

interface Compiled {
  readonly segments: ReadonlyArray<string | undefined>
  readonly route: Route
}

const matchers = new WeakMap<ReadonlyArray<Route>, Matcher>()

/**
 * A matcher of routes, built once per list: by method, then by the number
 * of segments, the candidates most specific first (a static segment before
 * a parameter, as the router prefers); a request's path is split once and
 * compared segment by segment (a parameter takes any one non-empty segment).
 */
export const matcher = (list: ReadonlyArray<Route>): Matcher => {
  const known = matchers.get(list)
  if (known !== undefined) return known
  const table = new Map<string, Map<number, Array<Compiled>>>()
  for (const route of [...list].sort(bySpecificity)) {
    const segments = route.path.split("/").map((part) => (isParam(part) ? undefined : part))
    const byLength = table.get(route.method) ?? new Map<number, Array<Compiled>>()
    const candidates = byLength.get(segments.length) ?? []
    candidates.push({ segments, route })
    byLength.set(segments.length, candidates)
    table.set(route.method, byLength)
  }
  const match = (method: string, pathname: string): Route | undefined => {
    const byLength = table.get(method)
    if (byLength === undefined) return undefined
    const parts = pathname.split("/")
    if (parts.length > 1 && parts[parts.length - 1] === "") parts.pop()
    const candidates = byLength.get(parts.length)
    if (candidates === undefined) return undefined
    for (const { route, segments } of candidates) {
      let matches = true
      for (let i = 0; i < parts.length && matches; i++) {
        const expected = segments[i]
        matches = expected === undefined ? parts[i] !== "" : parts[i] === expected
      }
      if (matches) return route
    }
    return undefined
  }
  const made = { match }
  matchers.set(list, made)
  return made
}
