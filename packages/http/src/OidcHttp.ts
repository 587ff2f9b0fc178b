/**
 * Single sign-on through an OpenID provider, with `openid-client` (the
 * authorization code flow with PKCE, RFC 7636, and the ID token's checks),
 * and the sign-in methods the server offers.
 *
 * `GET /oidc/login?next=` keeps the flow's secrets (state, nonce, PKCE
 * verifier) and the page to return to in a short-lived cookie of its own
 * (HttpOnly, SameSite=Lax so that it comes back with the provider's
 * redirect, limited to `/api/v1/oidc`), then redirects to the provider.
 * `GET /oidc/callback` checks the answer against the cookie, exchanges the
 * code, has SingleSignOn link the verified `iss`/`sub` to a user (made on
 * the first sign-in), and starts a browser session. It answers a page that
 * moves on to `next` by itself: the session cookie is SameSite=Strict, and a
 * navigation that a cross-site redirect started would not carry it.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { ApiErrors, HostingApi, type SignOnApi } from "@hosting/api"
import { Setup, SingleSignOn } from "@hosting/core"
import { Effect, Option, Redacted } from "effect"
import * as client from "openid-client"
import * as ApiApp from "./ApiApp.js"
import * as BrowserSession from "./BrowserSession.js"
import { handle } from "./ErrorMapping.js"
import { escapeHtml, page } from "./Pages.js"
import * as PublicUrl from "./PublicUrl.js"

/** The OpenID provider this server trusts, and this server's registration there. */
export interface OidcOptions {
  /** The issuer URL (discovery reads `<issuer>/.well-known/openid-configuration`). https, or http on a loopback host. */
  readonly issuer: string
  readonly clientId: string
  /** The client secret; none for a public client (PKCE alone). */
  readonly clientSecret?: Redacted.Redacted<string> | undefined
  /** Scopes asked for (default `openid email profile`). */
  readonly scope?: string | undefined
}

export interface SignOnHttpOptions extends PublicUrl.PublicUrlOptions {
  readonly oidc?: OidcOptions | undefined
}

/** The cookie holding a sign-in in progress. */
const flowCookie = "hosting_oidc"
const flowPath = `${HostingApi.basePath}/oidc`
/** Seconds a sign-in may take at the provider. */
const flowSeconds = 600

interface Flow {
  readonly state: string
  readonly nonce: string
  readonly verifier: string
  readonly next: string
}

const notConfigured = new ApiErrors.NotFound({
  error: "sso_not_configured",
  details: "Single sign-on is not configured on this server (HOSTING_OIDC_ISSUER); sign in with a token or a code."
})

/** Only paths of this server may be where a sign-in leads (no open redirect). */
export const safeNext = (next: string | undefined): string =>
  next !== undefined && /^\/(?![/\\])/.test(next) ? next : "/"

const isLoopback = (url: URL) => url.hostname === "127.0.0.1" || url.hostname === "localhost" || url.hostname === "[::1]"

const encodeFlow = (flow: Flow) => btoa(JSON.stringify(flow)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

const decodeFlow = (text: string): Flow | undefined => {
  try {
    const value = JSON.parse(atob(text.replace(/-/g, "+").replace(/_/g, "/"))) as Record<string, unknown>
    const fields = ["state", "nonce", "verifier", "next"] as const
    return fields.every((f) => typeof value[f] === "string") ? (value as unknown as Flow) : undefined
  } catch {
    return undefined
  }
}

const flowOf = (request: HttpServerRequest.HttpServerRequest): Flow | undefined => {
  const found = request.cookies[flowCookie]
  return found === undefined ? undefined : decodeFlow(found)
}

const flowCookieValue = (value: string, maxAge: number, secure: boolean) =>
  `${flowCookie}=${value}; HttpOnly; SameSite=Lax; Path=${flowPath}; Max-Age=${maxAge}${secure ? "; Secure" : ""}`

/** The page of a sign-in that could not finish, with the way back. */
const failedPage = (details: string, secure: boolean) =>
  page(
    "Single sign-on failed",
    `<p class="error" role="alert">${escapeHtml(details)}</p><p><a href="/signin">Back to sign-in</a></p>`,
    400,
    { "set-cookie": flowCookieValue("", 0, secure) }
  )

export const layer = (options: SignOnHttpOptions = {}) =>
  ApiApp.group(HostingApi.HostingApi, "signOn", (handlers) =>
    Effect.gen(function*() {
      const sso = yield* SingleSignOn.SingleSignOn
      const setup = yield* Setup.Setup
      const oidc = options.oidc
      const base = Effect.map(HttpServerRequest.HttpServerRequest, (request) => PublicUrl.baseOf(request, options))

      /** The provider's configuration, discovered at the first sign-in and kept; a failed discovery is tried again next time. */
      let discovered: Promise<client.Configuration> | undefined
      const configuration = (settings: OidcOptions) =>
        Effect.tryPromise({
          try: () => {
            if (discovered === undefined) {
              const issuer = new URL(settings.issuer)
              const secret = settings.clientSecret === undefined ? undefined : Redacted.value(settings.clientSecret)
              discovered = client.discovery(
                issuer,
                settings.clientId,
                secret,
                secret === undefined ? client.None() : client.ClientSecretBasic(secret),
                isLoopback(issuer) && issuer.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : undefined
              )
              discovered.catch(() => (discovered = undefined))
            }
            return discovered
          },
          catch: (cause) => cause
        })

      const callbackUrl = Effect.map(base, (b) => `${b}/oidc/callback`)

      // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
      // "Generator functions made once").
      const methods = Effect.gen(function*() {
        return {
          token: true,
          device: true,
          setup: yield* handle(setup.open),
          oidc: oidc === undefined ? null : { issuer: oidc.issuer, login_url: `${yield* base}/oidc/login` }
        }
      })
      const login = Effect.fnUntraced(function*(urlParams: typeof SignOnApi.LoginParams.Type) {
        if (oidc === undefined) return yield* Effect.fail(notConfigured)
        const config = yield* configuration(oidc).pipe(
          Effect.tapError((cause) => Effect.logError("single sign-on: the provider's discovery failed", cause)),
          Effect.orElseFail(() =>
            new ApiErrors.ServiceUnavailable({
              error: "sso_unavailable",
              details: "The single sign-on provider cannot be reached; try again shortly, or sign in with a token."
            })
          ),
          Effect.orDie
        )
        const flow: Flow = {
          state: client.randomState(),
          nonce: client.randomNonce(),
          verifier: client.randomPKCECodeVerifier(),
          next: safeNext(urlParams.next)
        }
        const challenge = yield* Effect.promise(() => client.calculatePKCECodeChallenge(flow.verifier))
        const target = client.buildAuthorizationUrl(config, {
          redirect_uri: yield* callbackUrl,
          scope: oidc.scope ?? "openid email profile",
          code_challenge: challenge,
          code_challenge_method: "S256",
          state: flow.state,
          nonce: flow.nonce
        })
        const secure = (yield* base).startsWith("https:")
        return HttpServerResponse.redirect(target.href, {
          status: 302,
          headers: { "set-cookie": flowCookieValue(encodeFlow(flow), flowSeconds, secure), "cache-control": "no-store" }
        })
      })
      const callback = Effect.fnUntraced(function*(urlParams: typeof SignOnApi.CallbackParams.Type) {
        if (oidc === undefined) return yield* Effect.fail(notConfigured)
        const request = yield* HttpServerRequest.HttpServerRequest
        const secure = (yield* base).startsWith("https:")
        if (urlParams.error !== undefined) {
          return failedPage(`The provider refused the sign-in: ${urlParams.error_description ?? urlParams.error}.`, secure)
        }
        const flow = flowOf(request)
        if (flow === undefined) {
          return failedPage("This sign-in was not started here, or took longer than ten minutes; start it again.", secure)
        }
        const query = new URL(request.url, "http://callback").search
        const current = new URL(`${yield* callbackUrl}${query}`)
        const claims = yield* Effect.flatMap(configuration(oidc), (config) =>
          Effect.tryPromise(() =>
            client.authorizationCodeGrant(config, current, {
              pkceCodeVerifier: flow.verifier,
              expectedState: flow.state,
              expectedNonce: flow.nonce,
              idTokenExpected: true
            })
          )).pipe(
            Effect.map((tokens) => Option.fromNullable(tokens.claims())),
            Effect.tapError((cause) => Effect.logWarning("single sign-on: the code exchange failed", cause)),
            Effect.option,
            Effect.map(Option.flatten)
          )
        if (Option.isNone(claims)) {
          return failedPage("The provider's answer could not be verified; start the sign-in again.", secure)
        }
        const c = claims.value
        const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined)
        // The session was just made: it authenticates, or storage failed.
        const signedIn = yield* handle(sso.signIn({
          issuer: c.iss,
          subject: c.sub,
          email: text(c["email"]),
          name: text(c["name"]),
          preferred_username: text(c["preferred_username"])
        }).pipe(Effect.catchTag("Unauthenticated", Effect.die)))
        const next = escapeHtml(flow.next)
        return page(
          "Signed in",
          `<p>Signed in as ${escapeHtml(signedIn.principal.user.name)} (${escapeHtml(signedIn.principal.user.id)}).</p>` +
            `<p><a href="${next}">Continue</a></p>`,
          200,
          // The flow's cookie is left to expire: its state matches no later answer, and its code is spent.
          { "set-cookie": BrowserSession.setCookie(signedIn.session, signedIn.expires_in, secure) },
          `<meta http-equiv="refresh" content="0;url=${next}">`
        )
      })

      return handlers
        .handle("methods", () => methods)
        .handle("login", ({ urlParams }) => login(urlParams))
        .handle("callback", ({ urlParams }) => callback(urlParams))
    }))
