/**
 * The HTTP side assembled: the API with every handler, authentication, the
 * error bodies, the OpenAPI document and its reference page.
 */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { HostingApi } from "@hosting/api"
import { Layer } from "effect"
import * as AccountsHttp from "./AccountsHttp.js"
import * as AgentsHttp from "./AgentsHttp.js"
import * as Auth from "./Auth.js"
import * as ChatHttp from "./ChatHttp.js"
import * as DeploymentsHttp from "./DeploymentsHttp.js"
import * as ErrorResponses from "./ErrorResponses.js"
import * as FilesHttp from "./FilesHttp.js"
import * as OAuthHttp from "./OAuthHttp.js"
import * as PublicAgentCache from "./PublicAgentCache.js"
import * as SessionHttp from "./SessionHttp.js"
import * as TracesHttp from "./TracesHttp.js"

/** Options of the HTTP layer. */
export interface HostingHttpOptions {
  /** Largest request body accepted, in bytes (default 2 MiB). */
  readonly maxBodyBytes?: number
  /** The API's public base URL (`https://host/api/v1`), for links it hands out; derived from each request when absent. */
  readonly publicUrl?: string | undefined
}

/**
 * The handlers of every group of HostingApi, with authentication. They also
 * serve an API that extends HostingApi with groups of its own.
 */
export const handlersWith = (options: HostingHttpOptions = {}) =>
  Layer.mergeAll(
    AgentsHttp.publicLayer,
    AgentsHttp.layer,
    AccountsHttp.layer,
    DeploymentsHttp.layer,
    ChatHttp.layer,
    FilesHttp.layer,
    TracesHttp.layer,
    OAuthHttp.layer(options),
    OAuthHttp.wellKnownLayer(options),
    SessionHttp.layer(options)
  ).pipe(Layer.provide(Auth.layer), Layer.provide(PublicAgentCache.layer))

/** The handlers with links derived from each request. */
export const handlers = handlersWith()

/**
 * HostingApi with its handlers; needs the core use cases (UseCases.layer).
 * It also gives the handlers' PublicAgentCache (one instance: a layer is
 * built once per build), for a server that answers cached reads early.
 */
export const apiWith = (options: HostingHttpOptions = {}) =>
  HttpApiBuilder.api(HostingApi.HostingApi).pipe(
    Layer.provide(handlersWith(options)),
    Layer.provideMerge(PublicAgentCache.layer)
  )

/** HostingApi with its handlers and the default options. */
export const api = apiWith()

/** What every served API gets: the OpenAPI document, the reference page, the body limit and error bodies. */
export const extras = (options: HostingHttpOptions = {}) =>
  Layer.mergeAll(
    HttpApiBuilder.middlewareOpenApi({ path: `${HostingApi.basePath}/openapi.json` }),
    HttpApiScalar.layer({ path: `${HostingApi.basePath}/docs` }),
    ErrorResponses.layer({ maxBodyBytes: options.maxBodyBytes ?? 2 * 1024 * 1024 })
  )

/** HostingApi plus its extras, ready for `HttpApiBuilder.serve`. */
export const layer = (options: HostingHttpOptions = {}) => extras(options).pipe(Layer.provideMerge(apiWith(options)))
