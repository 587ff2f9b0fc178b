/**
 * The typed client of the hosting API. Every route, request and answer comes
 * from the `HostingApi` definition that the server implements, so the two
 * cannot drift: `client.agents.register({ path, payload })` has the types of
 * the route, and each error the route declares arrives as its class of
 * `ApiErrors` (`NotFound`, `Forbidden`, ...), carrying `{ error, details }`.
 */
import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { HostingApi } from "@hosting/api"
import { Context, Effect, Layer, Redacted } from "effect"

/** Where the API is and who calls it. */
export interface ClientOptions {
  /**
   * The API's base address, `/api/v1` included (`http://127.0.0.1:8080/api/v1`).
   * A bare origin (`http://127.0.0.1:8080`) gets `/api/v1` appended.
   */
  readonly baseUrl: string
  /** The bearer token sent with every request; none for the public reads. */
  readonly token?: string | Redacted.Redacted<string> | undefined
}

/**
 * The base address in one spelling: no trailing slash, `/api/v1` at the end.
 * Fails on what is not an http(s) URL.
 */
export const normalizeBaseUrl = (baseUrl: string): string => {
  const url = new URL(baseUrl.trim())
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`not an http(s) URL: ${baseUrl}`)
  }
  url.search = ""
  url.hash = ""
  let path = url.pathname.replace(/\/+$/, "")
  if (!path.endsWith(HostingApi.basePath)) path = `${path}${HostingApi.basePath}`
  url.pathname = path
  return url.toString().replace(/\/+$/, "")
}

/**
 * What the derived client prefixes its paths with: the base address without
 * `/api/v1`, since the API definition carries that prefix itself.
 */
export const apiRoot = (baseUrl: string): string => {
  const base = normalizeBaseUrl(baseUrl)
  return base.slice(0, base.length - HostingApi.basePath.length)
}

/** The token as text, whether given plain or redacted. */
export const tokenValue = (token: ClientOptions["token"]): string | undefined =>
  token === undefined ? undefined : Redacted.isRedacted(token) ? Redacted.value(token) : token

/** Adds the bearer token of the options, if any, to a request. */
export const authorize = (options: Pick<ClientOptions, "token">) => {
  const token = tokenValue(options.token)
  return (request: HttpClientRequest.HttpClientRequest) =>
    token === undefined || token === "" ? request : HttpClientRequest.bearerToken(request, token)
}

/** The derived client: one method per route, grouped as the API groups them. */
export type Client = typeof HostingApi.HostingApi extends HttpApi.HttpApi<infer _Id, infer Groups, infer ApiError, infer _R>
  ? HttpApiClient.Client<Groups, ApiError, never>
  : never

/** Builds the derived client on the HttpClient of the context (`FetchHttpClient.layer` in Node and browsers). */
export const make = (options: ClientOptions): Effect.Effect<Client, never, HttpClient.HttpClient> =>
  // Suspended, so that a malformed base address is a defect of this effect rather than a throw at the call.
  Effect.suspend(() =>
    HttpApiClient.make(HostingApi.HostingApi, {
      baseUrl: apiRoot(options.baseUrl),
      transformClient: HttpClient.mapRequest(authorize(options))
    })
  )

/** The client as a service, for programs that build it once. */
export class HostingClient extends Context.Tag("@hosting/client/HostingClient")<HostingClient, Client>() {}

/** The client as a layer; it needs an `HttpClient` (`FetchHttpClient.layer`, or a Node one). */
export const layer = (options: ClientOptions): Layer.Layer<HostingClient, never, HttpClient.HttpClient> =>
  Layer.effect(HostingClient, make(options))
