/**
 * Where the links the API hands out point (the device flow's URIs and the
 * issuer, a reservation's `upload_url`), and which origin its own pages have.
 * A client chooses its `Host` and `X-Forwarded-*` headers, so none of them
 * decides a link unless it comes from a proxy the server trusts:
 *
 * 1. the configured public URL (`HOSTING_PUBLIC_URL`), when there is one;
 * 2. else, behind trusted proxies (`HOSTING_TRUST_PROXY`), the protocol and
 *    host the outermost trusted proxy forwarded (`X-Forwarded-Proto`,
 *    `X-Forwarded-Host`, else `Host`);
 * 3. else the address the connection arrived on: the listening address.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { HostingApi } from "@hosting/api"

export interface PublicUrlOptions {
  /** The API's public base URL (`https://host/api/v1`). */
  readonly publicUrl?: string | undefined
  /** Proxies in front of the server whose forwarded headers are trusted; 0 (default) trusts none. */
  readonly trustedProxies?: number | undefined
}

/** A host as a URL carries it: a name or an IPv4 address, or a bracketed IPv6 one, with an optional port. */
const hostPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/

const hopsOf = (options: PublicUrlOptions) => Math.max(0, Math.floor(options.trustedProxies ?? 0))

/** The entry of a comma-separated forwarded header that the outermost of `hops` trusted proxies wrote. */
const forwarded = (value: string | undefined, hops: number): string | undefined => {
  const entries = (value ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  return entries.length === 0 ? undefined : entries[Math.max(0, entries.length - hops)]
}

/** The host a trusted proxy forwarded, or undefined when the request has no trusted one. */
const forwardedHost = (request: HttpServerRequest.HttpServerRequest, hops: number): string | undefined => {
  if (hops === 0) return undefined
  const host = forwarded(request.headers["x-forwarded-host"], hops) ?? request.headers["host"]
  return host !== undefined && hostPattern.test(host) ? host : undefined
}

/** The local address and port of the request's connection (Node), as a URL host. */
const localHost = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const socket = (request.source as { readonly socket?: { readonly localAddress?: string; readonly localPort?: number } } | null)
    ?.socket
  if (socket?.localAddress === undefined || socket.localPort === undefined) return undefined
  const address = socket.localAddress.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, "")
  return address.includes(":") ? `[${address}]:${socket.localPort}` : `${address}:${socket.localPort}`
}

/** The public base URL of the API (`https://host/api/v1`, no trailing slash) for links answered to this request. */
export const baseOf = (request: HttpServerRequest.HttpServerRequest, options: PublicUrlOptions): string => {
  if (options.publicUrl !== undefined) return options.publicUrl.replace(/\/+$/, "")
  const hops = hopsOf(options)
  const host = forwardedHost(request, hops)
  if (host !== undefined) {
    const proto = forwarded(request.headers["x-forwarded-proto"], hops)
    return `${proto === "https" ? "https" : "http"}://${host}${HostingApi.basePath}`
  }
  return `http://${localHost(request) ?? "localhost"}${HostingApi.basePath}`
}

/**
 * The host of this server's pages as the browser sees it, which a same-origin
 * `Origin` names: the public URL's, a trusted proxy's, else the request's own
 * `Host` (which a browser sets; a script of another site cannot add
 * `X-Forwarded-Host` to a form post).
 */
export const pageHostOf = (request: HttpServerRequest.HttpServerRequest, options: PublicUrlOptions): string | undefined => {
  if (options.publicUrl !== undefined) return new URL(options.publicUrl).host
  return forwardedHost(request, hopsOf(options)) ?? request.headers["host"]
}
