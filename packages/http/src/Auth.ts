/**
 * Credentials on requests (a bearer token, else the browser session cookie):
 * the Authentication middleware for protected routes, and an optional
 * principal for public routes.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { ApiErrors, Authentication } from "@hosting/api"
import { Identity, type Principal, Steps } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import * as BrowserSession from "./BrowserSession.js"
import { handle } from "./ErrorMapping.js"
import * as RequestLog from "./RequestLog.js"
import * as Scopes from "./Scopes.js"
import { markCredentialUnused } from "./internal/apiMiddleware.js"
import { withRequest } from "./internal/currentRequest.js"

/** The token of an `Authorization: Bearer <token>` header, if the header has that form. */
export const bearerToken = (header: string | undefined): Option.Option<string> => {
  if (header === undefined) return Option.none()
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match ? Option.some(match[1]!) : Option.none()
}

/** The credential of a non-empty `Authorization` header (see `credentialOf`). */
export const headerCredential = (header: string): string => `header:${header}`

/**
 * The credential a request carries, as authentication reads it: the
 * `Authorization` header when present (even malformed), else the session
 * cookie. Limits kept per credential are keyed by it.
 */
export const credentialOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers["authorization"]
  if (header !== undefined && header !== "") return headerCredential(header)
  const session = BrowserSession.sessionOf(request)
  return session === undefined ? undefined : `session:${session}`
}

const missing = new ApiErrors.Unauthorized({
  error: "unauthorized",
  details: "Authentication required: send Authorization: Bearer <token>."
})

const malformed = new ApiErrors.Unauthorized({
  error: "unauthorized",
  details: "The Authorization header must have the form: Bearer <token>."
})

const sessionEnded = new ApiErrors.Unauthorized({
  error: "unauthorized",
  details: "The browser session has ended; sign in again."
})

/**
 * The principal of the session cookie. An ended session, or a state-changing
 * request without the session's CSRF value, is `onRefused` (public routes
 * then answer as to anyone; protected routes refuse).
 */
const cookiePrincipal = <E>(
  identity: Identity.Identity,
  request: HttpServerRequest.HttpServerRequest,
  session: string,
  onRefused: (reason: ApiErrors.Unauthorized | ApiErrors.Forbidden) => Effect.Effect<Option.Option<Principal.Principal>, E>
): Effect.Effect<Option.Option<Principal.Principal>, E | ApiErrors.InternalError> =>
  // Without a generator, which would be a new generator function for every request with the cookie (docs/decisions.md,
  // "Generator functions made once").
  Effect.flatMap(
    identity.authenticate(session).pipe(
      Effect.map(Option.some),
      Effect.catchTag("Unauthenticated", () => Effect.succeed(Option.none())),
      handle
    ),
    (principal) => {
      if (Option.isNone(principal)) return onRefused(sessionEnded)
      if (BrowserSession.isSafeMethod(request.method)) return Effect.succeed(principal)
      return Effect.flatMap(BrowserSession.hasCsrf(request, session), (valid) =>
        valid ? Effect.succeed(principal) : onRefused(BrowserSession.missingCsrf))
    }
  )

/** The principal of a bearer token, as a handler's failure (401) when the token is refused. */
const bearerPrincipal = (identity: Identity.Identity, token: string) => handle(identity.authenticate(token))

const principalWith = <E>(
  identity: Identity.Identity,
  onRefused: (reason: ApiErrors.Unauthorized | ApiErrors.Forbidden) => Effect.Effect<Option.Option<Principal.Principal>, E>
): Effect.Effect<
  Option.Option<Principal.Principal>,
  E | ApiErrors.Unauthorized | ApiErrors.InternalError,
  HttpServerRequest.HttpServerRequest
> =>
  withRequest((request): Effect.Effect<
    Option.Option<Principal.Principal>,
    E | ApiErrors.Unauthorized | ApiErrors.InternalError
  > => {
    const header = request.headers["authorization"]
    if (header === undefined || header === "") {
      const session = BrowserSession.sessionOf(request)
      return session === undefined ? Effect.succeed(Option.none()) : cookiePrincipal(identity, request, session, onRefused)
    }
    const token = bearerToken(header)
    return Option.isNone(token) ? Effect.fail(malformed) : Effect.map(bearerPrincipal(identity, token.value), Option.some)
  })

/**
 * The principal of the current request, if it carries a credential. An
 * invalid bearer token is refused; a cookie that is no longer valid, or sent
 * without its CSRF value where one is needed, reads as anonymous.
 */
export const optionalPrincipal = (identity: Identity.Identity) =>
  principalWith(identity, () => Effect.succeed(Option.none<Principal.Principal>()))

/**
 * The principal of the current request; without a valid credential, 401.
 * A bearer token, what nearly every request carries, takes the shortest way.
 */
export const requirePrincipal = (identity: Identity.Identity): Effect.Effect<
  Principal.Principal,
  ApiErrors.Unauthorized | ApiErrors.Forbidden | ApiErrors.InternalError,
  HttpServerRequest.HttpServerRequest
> => withRequest((request) => requirePrincipalOf(identity, request))

/** `requirePrincipal` of a given request. */
const requirePrincipalOf = (
  identity: Identity.Identity,
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<Principal.Principal, ApiErrors.Unauthorized | ApiErrors.Forbidden | ApiErrors.InternalError> => {
  const header = request.headers["authorization"]
  if (header !== undefined && header !== "") {
    const token = bearerToken(header)
    return Option.isNone(token) ? Effect.fail(malformed) : bearerPrincipal(identity, token.value)
  }
  const session = BrowserSession.sessionOf(request)
  if (session === undefined) return Effect.fail(missing)
  return Effect.flatMap(
    cookiePrincipal(identity, request, session, Effect.fail),
    Option.match({ onNone: () => Effect.fail(missing), onSome: Effect.succeed })
  )
}

/** Implements the Authentication middleware with Identity. */
export const layer = Layer.effect(
  Authentication.Authentication,
  Effect.gen(function*() {
    const identity = yield* Identity.Identity
    // Both schemes read the header first, then the cookie, so the platform's
    // second try (the cookie scheme after a failed bearer) gives the same answer.
    const authenticated = withRequest((request) =>
      Effect.flatMap(requirePrincipalOf(identity, request), (principal) => {
        // The access line names who called; a token made with a scope list is held to the scope of the route.
        RequestLog.noteUser(request, principal.user.id)
        return Scopes.check(principal)
      })).pipe(
        // A storage failure while checking the credential is a 500, not a 401.
        Steps.catchFailure((error) =>
          error instanceof ApiErrors.Unauthorized || error instanceof ApiErrors.Forbidden ? Effect.fail(error) : Effect.die(error)
        )
      )
    // The credential the platform decodes is not read (the request is): the compiled app does not decode it.
    const authenticate = markCredentialUnused(() => authenticated)
    return Authentication.Authentication.of({ bearer: authenticate, cookie: authenticate })
  })
)
