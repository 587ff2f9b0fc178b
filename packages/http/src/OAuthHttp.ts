/**
 * Handlers of device login (RFC 8628), revocation (RFC 7009), the metadata
 * (RFC 8414) and the approval page. The page keeps a browser session in an
 * HttpOnly, SameSite=Strict cookie; its forms carry a CSRF value derived from
 * the session, and cross-origin posts are refused.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { HostingApi, OAuthApi } from "@hosting/api"
import { DeviceAuth, Identity } from "@hosting/core"
import { Effect, Either, Option } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as BrowserSession from "./BrowserSession.js"
import * as ApiRoutes from "./ApiRoutes.js"
import { handle } from "./ErrorMapping.js"
import { escapeHtml, page } from "./Pages.js"
import * as PublicUrl from "./PublicUrl.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

/** Name of the approval page's session cookie (the browser session of the dashboard too). */
export const sessionCookie = BrowserSession.cookieName

/**
 * The approval page's sign-in: an access token, or (when single sign-on is
 * on) the OpenID provider, which comes back to this page with the code.
 */
const signInForm = (userCode: string, singleSignOn: boolean, error?: string) =>
  page(
    "Sign in to approve a device",
    `${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ""}` +
      `<p>A command-line client asks to sign in as you. Sign in to review the request.</p>` +
      (singleSignOn
        ? `<p><a href="oidc/login?next=${encodeURIComponent(`${HostingApi.basePath}/device?user_code=${encodeURIComponent(userCode)}`)}">` +
          `Sign in with single sign-on</a></p><p>or with a platform access token:</p>`
        : "") +
      `<form method="post" action="device/session"><input type="hidden" name="user_code" value="${escapeHtml(userCode)}">` +
      `<label for="token">Access token</label><br><input id="token" name="token" type="password" autocomplete="off" required autofocus><br>` +
      `<button type="submit">Sign in</button></form>`,
    error ? 401 : 200
  )

const approvalForm = (name: string, session: string, view: Option.Option<DeviceAuth.CodeView>, typed: string, headers = {}) =>
  Effect.map(BrowserSession.csrfOf(session), (csrf) => {
    const intro = `<p>Signed in as <strong>${escapeHtml(name)}</strong>.</p>`
    if (Option.isNone(view)) {
      const notFound = typed === "" ? "" : `<p class="error" role="alert">No login is waiting for code ${escapeHtml(typed)}.</p>`
      return page(
        "Approve a device",
        `${intro}${notFound}<form method="get" action="device"><label for="user_code">Code shown by the client</label><br>` +
          `<input id="user_code" name="user_code" autocomplete="off" required autofocus><br><button type="submit">Continue</button></form>`,
        200,
        headers
      )
    }
    const code = view.value
    if (code.state !== "pending") {
      return page("Approve a device", `${intro}<p>The login with code <code>${escapeHtml(code.user_code)}</code> is ${code.state}.</p>`, 200, headers)
    }
    return page(
      "Approve a device",
      `${intro}<p>The client <strong>${escapeHtml(code.client_id)}</strong> asks to act as you with code</p>` +
        `<p><code>${escapeHtml(code.user_code)}</code></p>` +
        (code.scope === ""
          ? "<p>It asks for everything this sign-in may do.</p>"
          : `<p>It asks for the scopes <strong>${escapeHtml(code.scope)}</strong> (within what this sign-in may do).</p>`) +
        "<p>Approve only if this is the code your client shows.</p>" +
        `<form method="post" action="device"><input type="hidden" name="user_code" value="${escapeHtml(code.user_code)}">` +
        `<input type="hidden" name="csrf" value="${csrf}">` +
        `<button type="submit" name="decision" value="approve">Approve</button> ` +
        `<button type="submit" name="decision" value="deny">Deny</button></form>`,
      200,
      headers
    )
  })

const crossOrigin = () => page("Request refused", "<p class=\"error\">This form can only be sent from this server's page.</p>", 403)

/** The approval page, the `verification_uri` of device logins. */
const devicePage = ApiRoutes.routeOf(OAuthApi.OAuthApi, "devicePage")

/** Where the device flow's links point (PublicUrl.ts): the public URL, else a trusted proxy's host, else the listening address. */
export interface OAuthHttpOptions extends PublicUrl.PublicUrlOptions {
  /** Whether single sign-on is on: the approval page then offers it. */
  readonly singleSignOn?: boolean | undefined
}

export const layer = (options: OAuthHttpOptions = {}) =>
  ApiApp.group(HostingApi.HostingApi, "oauth", (handlers) =>
    Effect.gen(function*() {
      const auth = yield* DeviceAuth.DeviceAuth
      const identity = yield* Identity.Identity
      const base = Effect.map(HttpServerRequest.HttpServerRequest, (request) => PublicUrl.baseOf(request, options))

      /** The signed-in user of the page, with the session token. */
      const session = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const token = BrowserSession.sessionOf(request)
        if (token === undefined) return Option.none()
        return yield* identity.authenticate(token).pipe(
          Effect.map((principal) => Option.some({ principal, token })),
          Effect.catchTag("Unauthenticated", () => Effect.succeed(Option.none()))
        )
      })

      // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
      // "Generator functions made once").
      const deviceCode = Effect.fnUntraced(function*(payload: typeof OAuthApi.DeviceCodeRequest.Type) {
        const started = yield* handle(auth.start(payload.client_id, payload.scope ?? ""))
        const page = ApiRoutes.link(yield* base, devicePage)
        return {
          ...started,
          verification_uri: page,
          verification_uri_complete: `${page}?user_code=${encodeURIComponent(started.user_code)}`
        }
      })
      const approvalPage = Effect.fnUntraced(function*(urlParams: { readonly user_code?: string | undefined }) {
        const typed = urlParams.user_code ?? ""
        const signedIn = yield* handle(session)
        if (Option.isNone(signedIn)) return signInForm(typed, options.singleSignOn === true)
        const view = typed === "" ? Option.none() : yield* handle(auth.describe(typed))
        return yield* approvalForm(signedIn.value.principal.user.name, signedIn.value.token, view, typed)
      })
      const deviceSession = Effect.fnUntraced(function*(payload: typeof OAuthApi.SessionRequest.Type) {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!BrowserSession.sameOrigin(request, options)) return crossOrigin()
        const typed = payload.user_code ?? ""
        const signedIn = yield* auth.signIn(payload.token).pipe(
          Effect.map(Option.some),
          Effect.catchTag("Unauthenticated", () => Effect.succeed(Option.none()))
        )
        if (Option.isNone(signedIn)) return signInForm(typed, options.singleSignOn === true, "That access token is not valid or has expired.")
        const cookie = BrowserSession.setCookie(signedIn.value.session, signedIn.value.expires_in, (yield* base).startsWith("https:"))
        const view = typed === "" ? Option.none() : yield* auth.describe(typed)
        return yield* approvalForm(signedIn.value.principal.user.name, signedIn.value.session, view, typed, { "set-cookie": cookie })
      }, handle)
      const deviceDecision = Effect.fnUntraced(function*(payload: typeof OAuthApi.DecisionRequest.Type) {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (!BrowserSession.sameOrigin(request, options)) return crossOrigin()
        const signedIn = yield* session
        if (Option.isNone(signedIn)) return signInForm(payload.user_code, options.singleSignOn === true, "Your sign-in has ended; sign in again.")
        const expected = yield* BrowserSession.csrfOf(signedIn.value.token)
        if (!Identity.constantTimeEqual(expected, payload.csrf)) {
          return page("Request refused", "<p class=\"error\">The form has expired; reload the page and try again.</p>", 403)
        }
        const decided = yield* Effect.either(auth.decide(signedIn.value.principal, signedIn.value.token, payload.user_code, payload.decision))
        if (Either.isLeft(decided)) {
          if (decided.left._tag !== "InvalidRequest") return yield* Effect.fail(decided.left)
          return page("Approve a device", `<p class="error" role="alert">${escapeHtml(decided.left.details)}</p>`, 400)
        }
        return page(
          decided.right.state === "approved" ? "Device approved" : "Device denied",
          decided.right.state === "approved"
            ? "<p>The client is signed in. You can close this page and go back to your terminal.</p>"
            : "<p>The login was denied; the client will not get access.</p>"
        )
      }, handle)

      return handlers
        .handle("deviceCode", ({ payload }) => deviceCode(payload))
        .handle("token", ({ payload }) =>
          handle(auth.poll(payload.grant_type, payload.device_code)).pipe(
            // RFC 6749 5.1: token answers are never cached.
            Effect.map((token) => JsonAnswer.json(token, { headers: { "cache-control": "no-store", pragma: "no-cache" } }))
          ))
        .handle("revoke", ({ payload }) => handle(auth.revoke(payload.token)).pipe(Effect.as({})))
        .handle("metadata", () => Effect.map(base, metadataOf))
        .handle("devicePage", ({ urlParams }) => approvalPage(urlParams))
        .handle("deviceSession", ({ payload }) => deviceSession(payload))
        .handle("deviceDecision", ({ payload }) => deviceDecision(payload))
    }))

/** RFC 8414 metadata of the server at a base URL. */
export const metadataOf = (root: string) => ({
  issuer: root,
  device_authorization_endpoint: ApiRoutes.link(root, ApiRoutes.routeOf(OAuthApi.OAuthApi, "deviceCode")),
  token_endpoint: ApiRoutes.link(root, ApiRoutes.routeOf(OAuthApi.OAuthApi, "token")),
  revocation_endpoint: ApiRoutes.link(root, ApiRoutes.routeOf(OAuthApi.OAuthApi, "revoke")),
  grant_types_supported: [DeviceAuth.deviceCodeGrant],
  response_types_supported: [],
  token_endpoint_auth_methods_supported: ["none"],
  revocation_endpoint_auth_methods_supported: ["none"]
})

/** The metadata at the root path that RFC 8414 derives from the issuer `…/api/v1`. */
export const wellKnownLayer = (options: OAuthHttpOptions = {}) =>
  ApiApp.group(HostingApi.HostingApi, "wellKnown", (handlers) =>
    Effect.succeed(
      handlers.handle("metadata", () =>
        Effect.map(HttpServerRequest.HttpServerRequest, (request) => metadataOf(PublicUrl.baseOf(request, options))))
    ))
