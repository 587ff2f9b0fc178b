/**
 * Handlers of the browser session: sign in with a token (cookie + CSRF
 * value), read the current session, sign out.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiErrors, HostingApi, type SessionApi } from "@hosting/api"
import { DeviceAuth, Identity, type Principal } from "@hosting/core"
import { Effect } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as BrowserSession from "./BrowserSession.js"
import { handle } from "./ErrorMapping.js"
import * as PublicUrl from "./PublicUrl.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

const noSession = new ApiErrors.Unauthorized({
  error: "unauthorized",
  details: "No browser session: sign in with an access token."
})

const crossOrigin = new ApiErrors.Forbidden({
  error: "forbidden",
  details: "A browser session can only be started from a page of this server."
})

const view = (principal: Principal.Principal, session: string, expiresIn?: number) =>
  Effect.map(BrowserSession.csrfOf(session), (csrf): SessionApi.BrowserSession => ({
    user: { id: principal.user.id, name: principal.user.name },
    csrf,
    ...(expiresIn === undefined ? {} : { expires_in: expiresIn })
  }))

/** The API's public URL (PublicUrl.ts): cookies are `Secure` when it is https. */
export interface SessionHttpOptions extends PublicUrl.PublicUrlOptions {}

export const layer = (options: SessionHttpOptions = {}) =>
  ApiApp.group(HostingApi.HostingApi, "session", (handlers) =>
    Effect.gen(function*() {
      const auth = yield* DeviceAuth.DeviceAuth
      const identity = yield* Identity.Identity
      const secure = Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        PublicUrl.baseOf(request, options).startsWith("https:"))

      // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
      // "Generator functions made once").
      const signIn = Effect.fnUntraced(function*(payload: typeof SessionApi.SignInRequest.Type) {
        const request = yield* HttpServerRequest.HttpServerRequest
        // Login CSRF: another site must not sign a visitor in as someone else.
        if (!BrowserSession.sameOrigin(request, options)) return yield* Effect.fail(crossOrigin)
        const signedIn = yield* handle(auth.signIn(payload.token))
        const body = yield* view(signedIn.principal, signedIn.session, signedIn.expires_in)
        return JsonAnswer.json(body, {
          headers: {
            "set-cookie": BrowserSession.setCookie(signedIn.session, signedIn.expires_in, yield* secure),
            "cache-control": "no-store"
          }
        })
      })
      const current = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const session = BrowserSession.sessionOf(request)
        if (session === undefined) return yield* Effect.fail(noSession)
        const principal = yield* handle(identity.authenticate(session)).pipe(
          Effect.catchTag("Unauthorized", () => Effect.fail(noSession))
        )
        return JsonAnswer.json(yield* view(principal, session), { headers: { "cache-control": "no-store" } })
      })
      const signOut = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const session = BrowserSession.sessionOf(request)
        if (session !== undefined) {
          if (!(yield* BrowserSession.hasCsrf(request, session))) return yield* Effect.fail(BrowserSession.missingCsrf)
          yield* handle(auth.revoke(session))
        }
        return HttpServerResponse.empty({ status: 204, headers: { "set-cookie": BrowserSession.clearCookie(yield* secure) } })
      })

      return handlers
        .handle("signIn", ({ payload }) => signIn(payload))
        .handle("current", () => current)
        .handle("signOut", () => signOut)
    }))
