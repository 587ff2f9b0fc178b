/**
 * The largest request body each route accepts. Routes whose bodies are a
 * few fields take a few kilobytes; the routes that carry documents (agent
 * registration, OTLP exports) take the server-wide limit. A route missing
 * from the table takes the server-wide limit too, and no route takes more
 * than it (routes an embedder adds keep working as before). File uploads are not limited here: their limit is the size
 * reserved for the file.
 */
import { HostingApi } from "@hosting/api"

const KiB = 1024

/** What a route takes: a number of bytes, or the server-wide limit. */
export type RouteLimit = number | "server"

/**
 * Limits keyed by `METHOD path`, with the path as the API declares it
 * (`:param` segments) under `/api/v1`.
 */
export const routes: Readonly<Record<string, RouteLimit>> = {
  // Documents: the spec (256 KiB) and the readme (1 MiB) of a build; OTLP batches.
  "POST /agents/:account/:name/register": "server",
  "POST /otlp/v1/traces": "server",
  // A message of up to 100,000 characters (up to 6 bytes each once escaped) and its attachment keys.
  "POST /deployments/:deploymentId/messaging/conversations/:conversationId/messages": 1024 * KiB,
  "POST /agents/:account/:name/publish": 16 * KiB,
  "POST /agents/:account/:name/deployments": 16 * KiB,
  "PUT /accounts/:account": 16 * KiB,
  "PUT /deployments/:deploymentId/chat/conversations/:conversationId/title": 16 * KiB,
  "POST /deployments/:deploymentId/messaging/conversations/:conversationId/cancel": 16 * KiB,
  "POST /deployments/:deploymentId/files": 16 * KiB,
  "POST /deployments/:deploymentId/files/:key/complete": 16 * KiB,
  "POST /deployments/:namespace/pods/:pod/restart": 16 * KiB,
  "DELETE /deployments/:deploymentId": 16 * KiB,
  // Sign-in and OAuth form posts: a token of at most 4,096 characters and a few short fields.
  "POST /session": 8 * KiB,
  "DELETE /session": 8 * KiB,
  "POST /oauth/device/code": 8 * KiB,
  "POST /oauth/token": 8 * KiB,
  "POST /oauth/revoke": 8 * KiB,
  "POST /device/session": 8 * KiB,
  "POST /device": 8 * KiB
}

interface Compiled {
  readonly method: string
  readonly pattern: RegExp
  readonly limit: RouteLimit
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const compiled: ReadonlyArray<Compiled> = Object.entries(routes).map(([key, limit]) => {
  const [method, path] = key.split(" ") as [string, string]
  const source = path.split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : escape(segment)).join("/")
  return { method, pattern: new RegExp(`^${escape(HostingApi.basePath)}${source}/?$`), limit }
})

/**
 * The largest body a request may send: the route's limit, never above
 * `serverLimit` (HOSTING_MAX_BODY_BYTES in the example server).
 */
export const limitFor = (method: string, pathname: string, serverLimit: number): number => {
  for (const route of compiled) {
    if (route.method === method && route.pattern.test(pathname)) {
      return route.limit === "server" ? serverLimit : Math.min(route.limit, serverLimit)
    }
  }
  return serverLimit
}
