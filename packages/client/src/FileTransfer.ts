/**
 * Uploads and downloads of deployment files (docs/files.md), streamed, with
 * progress.
 *
 * An upload reserves the file, sends the bytes to its `upload_url` and
 * completes it. The `upload_url` is either this API's own upload route
 * (sent with the bearer token) or a presigned object-store URL, which carries
 * its own signature: the token is never sent there.
 *
 * A download follows the API's 302 to a presigned URL itself, without the
 * token, so that neither the object store nor anyone between sees it.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import type { HttpApiError, HttpClientError } from "@effect/platform"
import type { Deployment } from "@hosting/core"
import { Effect, type ParseResult, type Scope, Stream } from "effect"
import { type ApiError, fromResponse, type UnexpectedResponse } from "./ClientError.js"
import { authorize, type ClientOptions, make, normalizeBaseUrl } from "./HostingClient.js"

/** How far a transfer is: bytes moved so far, and the whole size when known. */
export interface Progress {
  readonly transferred: number
  readonly total: number | undefined
}

/** Called as bytes move; keep it cheap, it runs for every chunk. */
export type OnProgress = (progress: Progress) => Effect.Effect<void>

type Failure =
  | ApiError
  | UnexpectedResponse
  | HttpClientError.HttpClientError
  | HttpApiError.HttpApiDecodeError
  | ParseResult.ParseError

/** A file to upload. */
export interface UploadOptions<E, R> extends ClientOptions {
  readonly deploymentId: Deployment.DeploymentId
  readonly filename: string
  readonly contentType: string
  /** The exact number of bytes that `content` holds. */
  readonly size: number
  /**
   * The bytes (a failure of the stream fails the upload with a `RequestError` carrying it): a stream (Node, with a Node `HttpClient`, which sends it with
   * its length), or a `Blob`/`File` (browsers: `fetch` sends a Blob's length,
   * but streams only chunked, which presigned object-store URLs refuse).
   */
  readonly content: Stream.Stream<Uint8Array, E, R> | Blob
  readonly onProgress?: OnProgress | undefined
}

/** A completed upload. */
export interface Uploaded {
  readonly key: string
  readonly filename: string
  readonly content_type: string
  readonly size: number
  readonly status: "ready"
}

const contentPath = (deploymentId: string, key: string) =>
  `/deployments/${encodeURIComponent(deploymentId)}/files/${encodeURIComponent(key)}/content`

/**
 * The request that sends the bytes. The API's own upload route is recognised
 * by host and path and called at the configured base address (its scheme
 * included) with the token; any other URL is presigned and gets no token.
 */
const uploadRequest = (options: ClientOptions, uploadUrl: string, deploymentId: string, key: string) => {
  const base = new URL(normalizeBaseUrl(options.baseUrl))
  const target = new URL(uploadUrl, base)
  // The API's own upload route, named by its path: the server may name itself by another host than the client's
  // base URL (its listening address), and the bytes and the token go to the base URL anyway.
  const own = target.search === "" && target.pathname === `${base.pathname}${contentPath(deploymentId, key)}`
  return own
    ? authorize(options)(HttpClientRequest.put(`${base.href}${contentPath(deploymentId, key)}`))
    : HttpClientRequest.put(target.href)
}

const isBlob = (content: unknown): content is Blob => typeof Blob !== "undefined" && content instanceof Blob

/** Reserves, uploads and completes a file; `onProgress` sees the bytes as they are sent. */
export const upload = <E, R>(
  options: UploadOptions<E, R>
): Effect.Effect<Uploaded, Failure, HttpClient.HttpClient | R> =>
  Effect.gen(function*() {
    const client = yield* make(options)
    const http = yield* HttpClient.HttpClient
    const context = yield* Effect.context<R>()
    const reserved = yield* client.files.reserve({
      path: { deploymentId: options.deploymentId },
      payload: { filename: options.filename, content_type: options.contentType, size: options.size }
    })
    const report = options.onProgress ?? (() => Effect.void)
    let sent = 0
    let body: HttpBody.HttpBody
    if (isBlob(options.content)) {
      // fetch gives no progress of a Blob's upload: the start and the end are what can be told.
      body = HttpBody.raw(options.content, { contentType: options.contentType, contentLength: options.size })
    } else {
      // A failure of the content ends the request with an Encode RequestError that carries it.
      const counted = options.content.pipe(
        Stream.provideContext(context),
        Stream.tap((chunk) => {
          sent += chunk.length
          return report({ transferred: sent, total: options.size })
        })
      )
      body = options.size === 0
        ? HttpBody.empty
        : HttpBody.stream(counted, options.contentType, options.size)
    }
    yield* report({ transferred: 0, total: options.size })
    let request = uploadRequest(options, reserved.upload_url, options.deploymentId, reserved.key).pipe(
      HttpClientRequest.setBody(body),
      // Presigned uploads have the content type in their signature: the reserved one, always sent.
      HttpClientRequest.setHeader("content-type", options.contentType)
    )
    if (options.size === 0) request = HttpClientRequest.setHeader(request, "content-length", "0")
    yield* Effect.scoped(
      Effect.flatMap(http.execute(request), (response) =>
        response.status >= 200 && response.status < 300 ? Effect.void : fromResponse(response))
    )
    if (isBlob(options.content)) yield* report({ transferred: options.size, total: options.size })
    const completed = yield* client.files.complete({ path: { deploymentId: options.deploymentId, key: reserved.key } })
    return {
      key: completed.key,
      filename: reserved.filename,
      content_type: reserved.content_type,
      size: completed.size,
      status: "ready" as const
    }
  })

/** A file to download. */
export interface DownloadOptions extends ClientOptions {
  readonly deploymentId: Deployment.DeploymentId
  /** A key from a reservation, or the name of an agent-produced file. */
  readonly fileKey: string
  readonly onProgress?: OnProgress | undefined
}

/** A download under way: what the server said of the file, and its bytes. */
export interface Download {
  /** The name from `Content-Disposition` (the exact UTF-8 one when given), if any. */
  readonly filename: string | undefined
  readonly contentType: string | undefined
  /** From `Content-Length`, when the server sent it. */
  readonly size: number | undefined
  /** The bytes; read them within the scope of `download`. */
  readonly stream: Stream.Stream<Uint8Array, HttpClientError.ResponseError>
}

/** The file name of a `Content-Disposition` header: `filename*` (RFC 5987) first, else `filename`. */
export const filenameOf = (disposition: string | undefined): string | undefined => {
  if (disposition === undefined) return undefined
  const extended = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition)
  if (extended) {
    try {
      return decodeURIComponent(extended[2]!.trim())
    } catch {
      // a malformed encoding: fall back to the plain name
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(disposition)
  if (!plain) return undefined
  return plain[1] !== undefined ? plain[1].replace(/\\(.)/g, "$1") : plain[2]!.trim()
}

const redirects = new Set([301, 302, 303, 307, 308])

/**
 * Opens a download: follows a redirect to a presigned URL without the token,
 * and answers with the file's name, type, size and byte stream, which must be
 * read before the scope closes.
 */
export const download = (
  options: DownloadOptions
): Effect.Effect<Download, ApiError | UnexpectedResponse | HttpClientError.HttpClientError, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const http = HttpClient.withScope(yield* HttpClient.HttpClient)
    const url = `${normalizeBaseUrl(options.baseUrl)}${contentPath(options.deploymentId, options.fileKey)}`
    // Redirects are followed here, so that the token is never sent to where they lead.
    let response = yield* http.execute(authorize(options)(HttpClientRequest.get(url))).pipe(
      Effect.provideService(FetchHttpClient.RequestInit, { redirect: "manual" })
    )
    const location = response.headers["location"]
    if (redirects.has(response.status) && location !== undefined) {
      response = yield* http.execute(HttpClientRequest.get(new URL(location, url).href))
    } else if (response.status === 0) {
      // A browser hides a manual redirect (an opaque answer): there fetch follows it, dropping the token across origins.
      response = yield* http.execute(authorize(options)(HttpClientRequest.get(url)))
    }
    if (response.status !== 200 && response.status !== 206) return yield* fromResponse(response)
    return describeDownload(response, options.onProgress)
  })

const describeDownload = (response: HttpClientResponse.HttpClientResponse, onProgress: OnProgress | undefined): Download => {
  const length = response.headers["content-length"]
  const size = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined
  let received = 0
  const report = onProgress ?? (() => Effect.void)
  return {
    filename: filenameOf(response.headers["content-disposition"]),
    contentType: response.headers["content-type"],
    size,
    stream: Stream.concat(
      Stream.fromEffect(report({ transferred: 0, total: size })).pipe(Stream.drain),
      response.stream.pipe(
        Stream.tap((chunk) => {
          received += chunk.length
          return report({ transferred: received, total: size })
        })
      )
    )
  }
}
