/**
 * The middleware of the compiled app's routes (`ApiApp.ts`): a group's and
 * an endpoint's, in the order the platform runs them, each security scheme
 * tried in turn.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import { Steps } from "@hosting/core"
import { Context, Effect } from "effect"

/** A middleware to run before a handler: its effect, whether it may fail, and what it provides. */
export interface Before {
  readonly effect: Effect.Effect<unknown, unknown, any>
  readonly optional: boolean
  readonly provides: string | undefined
}

/**
 * The mark of a security scheme's handler that reads the request itself
 * (`markCredentialUnused`): its credential is not decoded for it. Decoding
 * a bearer token makes a `Redacted` of it, which Effect keeps in a global
 * weak map: an entry made for every request, and weighed by every garbage
 * collection while it lives.
 */
const credentialUnused = Symbol.for("@hosting/http/CredentialUnused")

/** Marks a security handler that ignores the credential it is given (see `credentialUnused`). */
export const markCredentialUnused = <F extends (credential: any) => Effect.Effect<any, any, any>>(handler: F): F =>
  Object.assign(handler, { [credentialUnused]: true })

/**
 * A security middleware's effect: each scheme in turn, the next tried when
 * one fails. A scheme whose handler is the one of the scheme before it and
 * reads the request itself (the Authentication middleware's bearer and
 * cookie schemes are one handler) would do again what just failed, on the
 * same request: it is not tried a second time, and the failure stands.
 */
const securityEffect = (tag: HttpApiMiddleware.TagClassSecurityAny, service: Record<string, (credential: any) => Effect.Effect<any, any>>) => {
  let effect: Effect.Effect<any, any, any> | undefined
  let last: unknown
  for (const [key, security] of Object.entries(tag.security)) {
    const handler = service[key]!
    const unused = (handler as unknown as Record<symbol, unknown>)[credentialUnused] === true
    if (unused && handler === last) continue
    last = handler
    const scheme = unused ? Effect.suspend(() => handler(undefined)) : Effect.flatMap(HttpApiBuilder.securityDecode(security), handler)
    effect = effect === undefined ? scheme : Steps.catchFailure(effect, () => scheme)
  }
  return effect ?? Effect.void
}

/**
 * The middleware of an endpoint in the order it runs: the group's, then the
 * endpoint's, the last declared first (the platform wraps the handler in
 * each in turn, so the last wraps the others).
 */
export const beforeOf = (
  groupMiddleware: ReadonlySet<HttpApiMiddleware.TagClassAny>,
  endpointMiddleware: ReadonlySet<HttpApiMiddleware.TagClassAny>,
  context: Context.Context<never>
): ReadonlyArray<Before> => {
  const byKey = new Map<string, HttpApiMiddleware.TagClassAny>()
  for (const tag of groupMiddleware) byKey.set(tag.key, tag)
  for (const tag of endpointMiddleware) byKey.set(tag.key, tag)
  return Array.from(byKey.values(), (tag) => {
    const service = Context.unsafeGet(context, tag as unknown as Context.Tag<any, any>)
    return {
      effect: HttpApiMiddleware.isSecurity(tag) ? securityEffect(tag, service) : service,
      optional: tag.optional,
      provides: tag.provides === undefined ? undefined : (tag.provides as Context.Tag<any, any>).key
    }
  }).reverse()
}

/**
 * Runs the middleware in order, then `then` (the handler, or nothing); what
 * each provides joins `services`, the route's own context, before the next
 * runs (the context is made for this request alone and is not shared before
 * its handler runs). `then` is called where the last middleware's value is
 * kept, in that step.
 */
export const runBefore = <A = void, E = never, R = never>(
  before: ReadonlyArray<Before>,
  services: Map<string, unknown>,
  then: () => Effect.Effect<A, E, R> = () => Effect.void as Effect.Effect<any>,
  index = 0
): Effect.Effect<A, unknown, any> => {
  if (index === before.length) return then()
  const { effect, optional, provides } = before[index]!
  const next = () => runBefore(before, services, then, index + 1)
  const keep = (value: unknown) => {
    if (provides !== undefined) services.set(provides, value)
    return next()
  }
  return optional ? Effect.matchEffect(effect, { onFailure: next, onSuccess: keep }) : Effect.flatMap(effect, keep)
}
