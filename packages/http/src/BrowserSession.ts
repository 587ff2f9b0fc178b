/**
 * What the browser session cookie needs on the server: the cookie itself,
 * the CSRF value derived from it, and the same-origin check of form posts.
 * Shared by the session routes, the device approval page and authentication.
 */
import type { HttpServerRequest } from "@effect/platform"
import { ApiErrors, HostingApi, SessionApi } from "@hosting/api"
import { Identity } from "@hosting/core"
import { Effect } from "effect"
import * as PublicUrl from "./PublicUrl.js"

/** Name of the session cookie. */
export const cookieName = SessionApi.cookieName

/** The session token of the request's cookie, if it has a non-empty one. */
export const sessionOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const session = request.cookies[cookieName]
  return session === undefined || session === "" ? undefined : session
}

/** The answer to a state-changing cookie request without its CSRF value. */
export const missingCsrf = new ApiErrors.Forbidden({
  error: "forbidden",
  details: "A request made with the session cookie must carry the session's CSRF value in X-CSRF-Token."
})

/** The CSRF value of a session: a hash of the session token, which only its holder knows. */
export const csrfOf = (session: string) => Identity.hashToken(`csrf:${session}`)

/** True when the request carries the CSRF value of its session in `X-CSRF-Token`. */
export const hasCsrf = (request: HttpServerRequest.HttpServerRequest, session: string) =>
  Effect.map(csrfOf(session), (expected) => {
    const sent = request.headers[SessionApi.csrfHeader]
    return sent !== undefined && Identity.constantTimeEqual(expected, sent)
  })

/** Methods that change nothing, which need no CSRF value. */
export const isSafeMethod = (method: string) => method === "GET" || method === "HEAD" || method === "OPTIONS"

/** The `Set-Cookie` value that starts a session for `maxAgeSeconds`; `Secure` when the public URL is https. */
export const setCookie = (session: string, maxAgeSeconds: number, secure: boolean) =>
  `${cookieName}=${session}; HttpOnly; SameSite=Strict; Path=${HostingApi.basePath}; Max-Age=${maxAgeSeconds}${secure ? "; Secure" : ""}`

/** The `Set-Cookie` value that removes the session cookie. */
export const clearCookie = (secure: boolean) =>
  `${cookieName}=; HttpOnly; SameSite=Strict; Path=${HostingApi.basePath}; Max-Age=0${secure ? "; Secure" : ""}`

/** False for a request sent from another origin (a page of this server sends only to itself). */
export const sameOrigin = (request: HttpServerRequest.HttpServerRequest, options: PublicUrl.PublicUrlOptions) => {
  const origin = request.headers["origin"]
  if (origin === undefined || origin === "null") return origin === undefined
  try {
    return new URL(origin).host === PublicUrl.pageHostOf(request, options)
  } catch {
    return false
  }
}
