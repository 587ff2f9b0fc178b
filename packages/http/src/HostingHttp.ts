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
import * as ErrorResponses from "./ErrorResponses.js"

/** Options of the HTTP layer. */
export interface HostingHttpOptions {
  /** Largest request body accepted, in bytes (default 2 MiB). */
  readonly maxBodyBytes?: number
}

/** Every route of the API; needs the core use cases (Catalog, Accounts, Identity). */
export const api = HttpApiBuilder.api(HostingApi.HostingApi).pipe(
  Layer.provide([AgentsHttp.publicLayer, AgentsHttp.layer, AccountsHttp.layer]),
  Layer.provide(Auth.layer)
)

/** The API plus its documents and the error handling, ready for `HttpApiBuilder.serve`. */
export const layer = (options: HostingHttpOptions = {}) =>
  Layer.mergeAll(
    api,
    HttpApiBuilder.middlewareOpenApi({ path: `${HostingApi.basePath}/openapi.json` }),
    HttpApiScalar.layer({ path: `${HostingApi.basePath}/docs` }),
    ErrorResponses.layer({ maxBodyBytes: options.maxBodyBytes ?? 2 * 1024 * 1024 })
  ).pipe(Layer.provideMerge(api))
