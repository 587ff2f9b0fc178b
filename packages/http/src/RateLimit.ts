/**
 * Rate limiting: a token bucket per user and per client address, kept in
 * memory (bounded; the least recently used keys go first). A refused request
 * is answered 429 `rate_limited` with `Retry-After`; every limited answer
 * carries `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` and
 * `RateLimit-Policy`.
 *
 * Who is charged:
 * - a request without a credential: its client address;
 * - a request with a credential known to belong to a user: that user, whose
 *   tokens and sessions all share one bucket (minting more sessions buys no
 *   more requests);
 * - a request with a credential not seen yet: its client address, then, if
 *   the credential authenticates, its user too, and the credential is
 *   remembered as the user's. Made-up tokens therefore never escape the
 *   address's limit.
 *
 * The client address is the connection's, or with `trustedProxies` = n the
 * n-th `X-Forwarded-For` entry from the right (the one the outermost trusted
 * proxy saw). IPv6 addresses count per /64, which one host usually holds whole.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { RouteFacts } from "@hosting/api"
import { Identity, type Principal, Recent } from "@hosting/core"
import { Context, Effect, Layer, Option } from "effect"
import * as ApiRoutes from "./ApiRoutes.js"
import { credentialOf, requirePrincipal } from "./Auth.js"
import { causeResponse, json } from "./ErrorResponses.js"
import * as Health from "./Health.js"
import { withRequest } from "./internal/currentRequest.js"

/** `requests` every `seconds`: the bucket's size, refilled evenly over the window. */
export interface Rate {
  readonly requests: number
  readonly seconds: number
}

/** Options of the rate limit; every limit is off unless given. */
export interface RateLimitOptions {
  /** Per user: every bearer token and browser session of a user together. */
  readonly perUser?: Rate | undefined
  /** Per client address, for requests without a known credential. */
  readonly perIp?: Rate | undefined
  /** Proxies in front of the server whose `X-Forwarded-For` entries are trusted; 0 (default) trusts none. */
  readonly trustedProxies?: number | undefined
  /** Most keys kept per table (default 100,000). */
  readonly maxKeys?: number | undefined
  /** The clock in milliseconds (default `Date.now`), for tests. */
  readonly now?: (() => number) | undefined
}

/** What a bucket said about one request. */
export interface Decision {
  readonly allowed: boolean
  readonly rate: Rate
  /** Whole requests left in the bucket after this one. */
  readonly remaining: number
  /** Seconds until the bucket is full again. */
  readonly reset: number
  /** Seconds until one request is allowed again (0 when this one was). */
  readonly retryAfter: number
}

/** Parses `<requests>/<seconds>` (`600/60`); `off` or empty is no limit. */
export const parseRate = (text: string): Rate | undefined | "invalid" => {
  const trimmed = text.trim()
  if (trimmed === "" || trimmed === "off") return undefined
  const match = /^(\d+)\s*\/\s*(\d+)$/.exec(trimmed)
  if (match === null) return "invalid"
  const requests = Number(match[1])
  const seconds = Number(match[2])
  return requests >= 1 && seconds >= 1 && requests <= 1_000_000 && seconds <= 86_400 ? { requests, seconds } : "invalid"
}

interface Bucket {
  tokens: number
  at: number
}

/** Token buckets of one rate, at most `maxKeys` of them (least recently used dropped first). */
const buckets = (rate: Rate, maxKeys: number, now: () => number) => {
  const table = Recent.make<string, Bucket>(maxKeys)
  const perMs = rate.requests / (rate.seconds * 1000)
  const take = (key: string, cost: number): Decision => {
    const time = now()
    let bucket = table.get(key)
    if (bucket === undefined) {
      bucket = { tokens: rate.requests, at: time }
    } else {
      bucket.tokens = Math.min(rate.requests, bucket.tokens + (time - bucket.at) * perMs)
      bucket.at = time
    }
    table.set(key, bucket)
    const allowed = bucket.tokens >= cost
    if (allowed) bucket.tokens -= cost
    return {
      allowed,
      rate,
      remaining: Math.floor(bucket.tokens),
      reset: Math.ceil((rate.requests - bucket.tokens) / perMs / 1000),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((cost - bucket.tokens) / perMs / 1000))
    }
  }
  return { take, size: () => table.size }
}

/** The users of credentials that authenticated, at most `maxKeys` (least recently used dropped first). */
const knownUsers = (maxKeys: number) => {
  const table = Recent.make<string, string>(maxKeys)
  return {
    get: (key: string) => {
      const user = table.get(key)
      if (user !== undefined) table.set(key, user)
      return user
    },
    set: (key: string, user: string) => void table.set(key, user)
  }
}

/** Expands an IPv6 address to its first four groups (the /64); IPv4 and IPv4-mapped addresses stay whole. */
const addressKey = (address: string) => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return mapped[1]!
  if (!address.includes(":")) return address
  const [head = "", tail] = address.split("::") as [string, string | undefined]
  const left = head === "" ? [] : head.split(":")
  const right = tail === undefined || tail === "" ? [] : tail.split(":")
  const groups = tail === undefined ? left : [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right]
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, "")).join(":")}::/64`
}

export interface Service {
  /** True when some limit is on. */
  readonly enabled: boolean
  /** The address a request is charged to: the connection's, or the trusted proxy's view (see the module). */
  readonly clientAddress: (remoteAddress: string | undefined, forwardedFor: string | ReadonlyArray<string> | undefined) => string
  /** Charges a request (of `cost` requests, default 1) to an address; undefined when addresses are not limited. */
  readonly takeAddress: (address: string, cost?: number) => Decision | undefined
  /** Charges a request (of `cost` requests, default 1) to a user; undefined when users are not limited. */
  readonly takeUser: (user: string, cost?: number) => Decision | undefined
  /** The user a credential's key authenticated as, if it did before. */
  readonly userOf: (key: string) => string | undefined
  /** Remembers a credential's key as the user's. */
  readonly remember: (key: string, user: string) => void
}

/** The rate limiter of one server. */
export class RateLimiter extends Context.Tag("@hosting/http/RateLimiter")<RateLimiter, Service>() {}

export const make = (options: RateLimitOptions = {}): Service => {
  const now = options.now ?? Date.now
  const maxKeys = options.maxKeys ?? 100_000
  const hops = Math.max(0, Math.floor(options.trustedProxies ?? 0))
  const byAddress = options.perIp === undefined ? undefined : buckets(options.perIp, maxKeys, now)
  const byUser = options.perUser === undefined ? undefined : buckets(options.perUser, maxKeys, now)
  const known = knownUsers(maxKeys)
  const clientAddress = (remoteAddress: string | undefined, forwardedFor: string | ReadonlyArray<string> | undefined) => {
    const direct = remoteAddress ?? "unknown"
    if (hops === 0 || forwardedFor === undefined) return addressKey(direct)
    const entries = (typeof forwardedFor === "string" ? forwardedFor : forwardedFor.join(","))
      .split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
    // Entries left of the trusted proxies' own are whatever the client wrote.
    const seen = entries[entries.length - hops] ?? entries[0]
    return addressKey(seen ?? direct)
  }
  return {
    enabled: byAddress !== undefined || byUser !== undefined,
    clientAddress,
    takeAddress: (address, cost = 1) => byAddress?.take(address, cost),
    takeUser: (user, cost = 1) => byUser?.take(user, cost),
    userOf: known.get,
    remember: known.set
  }
}

/** The rate limiter with the given options. */
export const layer = (options: RateLimitOptions = {}) => Layer.sync(RateLimiter, () => make(options))

/** The `RateLimit-*` headers of a decision, plus `Retry-After` when it refused. */
export const headersOf = (decision: Decision): Record<string, string> => {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(decision.rate.requests),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.reset),
    "ratelimit-policy": `${decision.rate.requests};w=${decision.rate.seconds}`
  }
  if (!decision.allowed) headers["retry-after"] = String(decision.retryAfter)
  return headers
}

const refusalDetails = (decision: Decision, who: "address" | "user") =>
  `Too many requests from this ${who}: at most ${decision.rate.requests} every ${decision.rate.seconds} seconds. ` +
  `Retry after ${decision.retryAfter} seconds.`

const refusedResponse = (decision: Decision, who: "address" | "user") =>
  json(429, "rate_limited", refusalDetails(decision, who), headersOf(decision))

const withHeaders = (response: HttpServerResponse.HttpServerResponse, decision: Decision | undefined) =>
  decision === undefined ? response : HttpServerResponse.setHeaders(response, headersOf(decision))

/**
 * Charges a request (`cost` requests' worth) to the limiter, then answers it with `answered`
 * unless it is refused: to the user its credential (`credential`, as
 * `credentialOf` gives it) belongs to when that is known, else to its client
 * address. A new credential is looked up with `userOf` (once the address
 * has paid, so that made-up tokens cost no lookup past the address's limit)
 * and, when it authenticates, charged to its user as well and remembered.
 * The answer carries the `RateLimit-*` headers of the last bucket charged.
 */
export const charge = <E, R, R2>(
  limiter: Service,
  credential: string | undefined,
  address: () => string,
  userOf: Effect.Effect<Option.Option<string>, never, R2>,
  answered: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  cost = 1
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | R2> => {
  // Plain continuations, not a generator: this runs in front of every charged request.
  const asUser = (user: string, byAddress: Decision | undefined) => {
    const decision = limiter.takeUser(user, cost)
    if (decision !== undefined && !decision.allowed) return Effect.succeed(refusedResponse(decision, "user"))
    return Effect.map(answered, (response) => withHeaders(response, decision ?? byAddress))
  }
  const withKey = (key: string | undefined): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | R2> => {
    const known = key === undefined ? undefined : limiter.userOf(key)
    if (known !== undefined) return asUser(known, undefined)
    const byAddress = limiter.takeAddress(address(), cost)
    if (byAddress !== undefined && !byAddress.allowed) return Effect.succeed(refusedResponse(byAddress, "address"))
    const anonymous = Effect.map(answered, (response) => withHeaders(response, byAddress))
    if (key === undefined) return anonymous
    return Effect.flatMap(userOf, (user) => {
      if (Option.isNone(user)) return anonymous
      limiter.remember(key, user.value)
      return asUser(user.value, byAddress)
    })
  }
  return credential === undefined ? Effect.suspend(() => withKey(undefined)) : Effect.flatMap(Identity.hashToken(credential), withKey)
}

/** The user a credential authenticates as (`charge`'s `userOf`); none when it does not. */
export const userOf = <E, R>(authenticated: Effect.Effect<Principal.Principal, E, R>): Effect.Effect<Option.Option<string>, never, R> =>
  authenticated.pipe(
    Effect.map((principal) => Option.some<string>(principal.user.id)),
    Effect.orElseSucceed(() => Option.none<string>())
  )

/** What a request to a route counts as: its endpoint's `RouteFacts.RateCharge`, else one request. */
export const costOf = (route: ApiRoutes.Route | undefined): number =>
  route === undefined ? RouteFacts.defaultRateCharge : Context.getOrElse(route.annotations, RouteFacts.RateCharge, () => RouteFacts.defaultRateCharge)

/**
 * The API-level middleware that applies the limiter to every request, at
 * the charge its route declares (among the served API's routes; a request
 * no route takes counts as one). A probe or a route charged nothing passes
 * uncharged. The app's failures are answered here (as ErrorResponses does)
 * so that error answers carry the `RateLimit-*` headers too.
 */
export const middleware = HttpApiBuilder.middleware(
  Effect.map(Effect.all([RateLimiter, Identity.Identity, HttpApi.Api]), ([limiter, identity, { api }]) => {
    const routes = ApiRoutes.matcher(ApiRoutes.routesOf(api))
    return (app) =>
      !limiter.enabled ? app : withRequest((request) => {
        // A refused probe would take the server out of service for its prober's address.
        if (Health.isProbe(request.url)) return app
        const cost = costOf(routes.match(request.method, ApiRoutes.pathOf(request.url)))
        return cost === 0 ? app : charge(
          limiter,
          credentialOf(request),
          () => limiter.clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"]),
          userOf(requirePrincipal(identity)),
          Effect.catchAllCause(app, causeResponse),
          cost
        )
      })
  })
)
