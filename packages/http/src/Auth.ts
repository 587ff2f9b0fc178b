/**
 * Bearer tokens on requests: the Authentication middleware for protected
 * routes, and an optional principal for public routes.
 */
import { HttpServerRequest } from "@effect/platform"
import { ApiErrors, Authentication } from "@hosting/api"
import { Identity, type Principal } from "@hosting/core"
import { Effect, Layer, Option } from "effect"
import { handle } from "./ErrorMapping.js"

/** The token of an `Authorization: Bearer <token>` header, if the header has that form. */
export const bearerToken = (header: string | undefined): Option.Option<string> => {
  if (header === undefined) return Option.none()
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match ? Option.some(match[1]!) : Option.none()
}

const missing = new ApiErrors.Unauthorized({
  error: "unauthorized",
  details: "Authentication required: send Authorization: Bearer <token>."
})

const malformed = new ApiErrors.Unauthorized({
  error: "unauthorized",
  details: "The Authorization header must have the form: Bearer <token>."
})

/** The principal of the current request, if it carries a credential; an invalid credential is refused. */
export const optionalPrincipal = (
  identity: Identity.Identity
): Effect.Effect<
  Option.Option<Principal.Principal>,
  ApiErrors.Unauthorized | ApiErrors.InternalError,
  HttpServerRequest.HttpServerRequest
> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const header = request.headers["authorization"]
    if (header === undefined || header === "") return Option.none()
    const token = bearerToken(header)
    if (Option.isNone(token)) return yield* Effect.fail(malformed)
    return Option.some(yield* handle(identity.authenticate(token.value)))
  })

/** The principal of the current request; without a valid credential, 401. */
export const requirePrincipal = (identity: Identity.Identity) =>
  optionalPrincipal(identity).pipe(
    Effect.flatMap(Option.match({ onNone: () => Effect.fail(missing), onSome: Effect.succeed }))
  )

/** Implements the Authentication middleware with Identity. */
export const layer = Layer.effect(
  Authentication.Authentication,
  Effect.gen(function*() {
    const identity = yield* Identity.Identity
    return Authentication.Authentication.of({
      bearer: () =>
        requirePrincipal(identity).pipe(
          // A storage failure while checking the token is a 500, not a 401.
          Effect.catchAll((error) => error instanceof ApiErrors.Unauthorized ? Effect.fail(error) : Effect.die(error))
        )
    })
  })
)
