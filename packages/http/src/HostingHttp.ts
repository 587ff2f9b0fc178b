/**
 * The HTTP side assembled: the API with every handler, authentication, the
 * error bodies, the OpenAPI document and its reference page.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { HostingApi } from "@hosting/api"
import { Layer } from "effect"
import * as AccountsHttp from "./AccountsHttp.js"
import * as AgentsHttp from "./AgentsHttp.js"
import * as Auth from "./Auth.js"
import * as ChatHttp from "./ChatHttp.js"
import * as DeploymentsHttp from "./DeploymentsHttp.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as A2aHttp from "./A2aHttp.js"
import * as FilesHttp from "./FilesHttp.js"
import * as IdentityHttp from "./IdentityHttp.js"
import * as McpHttp from "./McpHttp.js"
import * as OAuthHttp from "./OAuthHttp.js"
import * as OidcHttp from "./OidcHttp.js"
import * as PublicAgentCache from "./PublicAgentCache.js"
import * as PublicUrl from "./PublicUrl.js"
import * as RateLimit from "./RateLimit.js"
import * as RequestLog from "./RequestLog.js"
import * as ReferencePage from "./ReferencePage.js"
import * as SessionHttp from "./SessionHttp.js"
import * as StreamLimits from "./StreamLimits.js"
import * as TracesHttp from "./TracesHttp.js"

/** Options of the HTTP layer. */
export interface HostingHttpOptions {
  /** Largest request body accepted, in bytes (default 2 MiB). */
  readonly maxBodyBytes?: number
  /**
   * The API's public base URL (`https://host/api/v1`), for links it hands out; when absent, the host a trusted
   * proxy forwarded, else the address the request arrived on (never a `Host` a client chose: PublicUrl.ts).
   */
  readonly publicUrl?: string | undefined
  /** Proxies in front of the server whose `X-Forwarded-*` headers are trusted (default: `rateLimit.trustedProxies`, else none). */
  readonly trustedProxies?: number | undefined
  /** Most event and reply streams one user may hold open, over all their tokens and sessions (default: no limit; the example server's default is 100). */
  readonly maxStreamsPerUser?: number | undefined
  /** Requests allowed per user and per client address (default: no limit). */
  readonly rateLimit?: RateLimit.RateLimitOptions | undefined
  /** Single sign-on through an OpenID provider (default: none). */
  readonly oidc?: OidcHttp.OidcOptions | undefined
  /** One access line per request in the log (default: off; RequestLog.ts). */
  readonly accessLog?: boolean | undefined
  /** Writes access lines directly instead of through Effect's logger (a server's cheaper sink). */
  readonly writeAccessLine?: RequestLog.RequestLogOptions["writeAccessLine"]
  /** Told of every answered request, for metrics (RequestLog.ts). */
  readonly observeRequest?: RequestLog.RequestLogOptions["observe"]
}

/** Largest request body accepted when `maxBodyBytes` is not given. */
const defaultMaxBodyBytes = 2 * 1024 * 1024

const streamLimits = (options: HostingHttpOptions) =>
  StreamLimits.layer({ maxPerUser: options.maxStreamsPerUser ?? 0 })

/** Where links point: the public URL, else what trusted proxies forwarded, else the listening address. */
const publicUrlOf = (options: HostingHttpOptions): PublicUrl.PublicUrlOptions => ({
  publicUrl: options.publicUrl,
  trustedProxies: options.trustedProxies ?? options.rateLimit?.trustedProxies
})

const handlersUsing = (options: HostingHttpOptions, streams: Layer.Layer<StreamLimits.StreamLimits>) =>
  Layer.mergeAll(
    AgentsHttp.publicLayer,
    AgentsHttp.layer,
    AccountsHttp.layerWith(publicUrlOf(options)),
    DeploymentsHttp.layerWith(publicUrlOf(options)),
    ChatHttp.layer,
    FilesHttp.layerWith(publicUrlOf(options)),
    A2aHttp.layerWith(publicUrlOf(options)),
    McpHttp.layerWith(publicUrlOf(options)),
    TracesHttp.layer,
    OAuthHttp.layer({ ...publicUrlOf(options), singleSignOn: options.oidc !== undefined }),
    OAuthHttp.wellKnownLayer(publicUrlOf(options)),
    SessionHttp.layer(publicUrlOf(options)),
    IdentityHttp.setupLayer,
    OidcHttp.layer({ ...publicUrlOf(options), oidc: options.oidc }),
    IdentityHttp.tokensLayer
  ).pipe(Layer.provide(Auth.layer), Layer.provide(PublicAgentCache.layer), Layer.provide(streams))

/**
 * The handlers of every group of HostingApi, with authentication. They also
 * serve an API that extends HostingApi with groups of its own.
 */
export const handlersWith = (options: HostingHttpOptions = {}) => handlersUsing(options, streamLimits(options))

/** The handlers with links derived from each request. */
export const handlers = handlersWith()

/**
 * HostingApi with its handlers; needs the core use cases (UseCases.layer).
 * It also gives the handlers' PublicAgentCache and StreamLimits (one
 * instance each: a layer is built once per build).
 */
export const apiWith = (options: HostingHttpOptions = {}) => {
  // One layer value for both uses, so that the handlers and the caller share one instance.
  const streams = streamLimits(options)
  return HttpApiBuilder.api(HostingApi.HostingApi).pipe(
    Layer.provide(handlersUsing(options, streams)),
    Layer.provideMerge(PublicAgentCache.layer),
    Layer.provideMerge(streams)
  )
}

/** HostingApi with its handlers and the default options. */
export const api = apiWith()

const extrasUsing = (options: HostingHttpOptions, limiter: Layer.Layer<RateLimit.RateLimiter>) =>
  Layer.mergeAll(
    HttpApiBuilder.middlewareOpenApi({ path: `${HostingApi.basePath}/openapi.json` }),
    ReferencePage.layer(`${HostingApi.basePath}/docs`),
    ErrorResponses.layer({ maxBodyBytes: options.maxBodyBytes ?? defaultMaxBodyBytes }),
    RateLimit.middleware.pipe(Layer.provide(limiter))
  )

/** What every served API gets: the OpenAPI document, the reference page, the body limits, rate limits and error bodies. */
export const extras = (options: HostingHttpOptions = {}) => extrasUsing(options, RateLimit.layer(options.rateLimit))

/** HostingApi plus its extras, ready for `HttpApiBuilder.serve`; it also gives the RateLimiter and the request log's settings. */
export const layer = (options: HostingHttpOptions = {}) => {
  const limiter = RateLimit.layer(options.rateLimit)
  return extrasUsing(options, limiter).pipe(
    Layer.provideMerge(apiWith(options)),
    Layer.provideMerge(limiter),
    Layer.provideMerge(Layer.succeed(RequestLog.RequestLogConfig, {
      accessLog: options.accessLog === true,
      writeAccessLine: options.writeAccessLine,
      observe: options.observeRequest
    }))
  )
}
