/**
 * Handlers of the file routes: reservations, uploads, downloads with ranges
 * or presigned redirects.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { FilesApi, HostingApi } from "@hosting/api"
import { type Deployment, Errors, File, Files, Principal } from "@hosting/core"
import { Effect, Option, Stream } from "effect"
import * as ApiApp from "./ApiApp.js"
import * as ApiRoutes from "./ApiRoutes.js"
import { handle } from "./ErrorMapping.js"
import * as PublicUrl from "./PublicUrl.js"
import * as JsonAnswer from "./internal/jsonAnswer.js"

const view = (f: File.FileRecord) => ({
  key: f.key,
  filename: f.filename,
  content_type: f.content_type,
  size: f.size,
  status: f.status,
  origin: f.origin,
  conversation_id: Option.getOrNull(f.conversation_id),
  created_at: f.created_at
})

/** A single `bytes=` range of a file of `size` bytes: the range, "all", or "unsatisfiable". */
export const parseRange = (header: string | undefined, size: number) => {
  if (header === undefined) return "all" as const
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  // Several ranges, or another unit: serve the whole file, as RFC 9110 allows.
  if (match === null || (match[1] === "" && match[2] === "")) return "all" as const
  let start: number
  let end: number
  if (match[1] === "") {
    const suffix = Number(match[2])
    if (suffix === 0) return "unsatisfiable" as const
    start = Math.max(0, size - suffix)
    end = size - 1
  } else {
    start = Number(match[1])
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1)
  }
  if (start >= size || start > end) return "unsatisfiable" as const
  return { start, end }
}

/** The path of a route under one deployment. */
interface DeploymentPath {
  readonly deploymentId: Deployment.DeploymentId
}

/** The path of a route of one file of a deployment. */
interface FilePath extends DeploymentPath {
  readonly fileKey: string
}

/** The upload route, the `upload_url` of a store without presigned uploads. */
const upload = ApiRoutes.routeOf(FilesApi.FilesApi, "upload")

/** The files routes; `upload_url` of a store without presigned uploads is this API's route under the public URL (PublicUrl.ts). */
export const layerWith = (options: PublicUrl.PublicUrlOptions) => ApiApp.group(HostingApi.HostingApi, "files", (handlers) =>
  Effect.gen(function*() {
    const files = yield* Files.Files
    const caller = Principal.CurrentPrincipal
    // Made once: a generator function made in a handler is a new one for every request (docs/decisions.md,
    // "Generator functions made once").
    const reserve = Effect.fnUntraced(function*(path: DeploymentPath, payload: typeof FilesApi.ReserveRequest.Type) {
      const principal = yield* caller
      const request = yield* HttpServerRequest.HttpServerRequest
      const reserved = yield* handle(files.reserve(principal, path.deploymentId, payload))
      const upload_url = Option.getOrElse(
        reserved.presigned_url,
        () => ApiRoutes.link(PublicUrl.baseOf(request, options), upload, { deploymentId: path.deploymentId, fileKey: reserved.file.key })
      )
      return { ...view(reserved.file), upload_url, expires_at: reserved.expires_at }
    })
    const receive = Effect.fnUntraced(function*(path: FilePath) {
      const principal = yield* caller
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = request.stream.pipe(
        Stream.mapError(() => new Errors.InvalidRequest({ details: "The upload was interrupted before it ended." }))
      )
      const stored = yield* handle(files.upload(principal, path.deploymentId, path.fileKey, body))
      return { key: path.fileKey, size: stored.size, status: "pending" as const }
    })
    const download = Effect.fnUntraced(function*(path: FilePath) {
      const principal = yield* caller
      const request = yield* HttpServerRequest.HttpServerRequest
      const found = yield* handle(files.download(principal, path.deploymentId, path.fileKey))
      const headers = { "cache-control": "private, no-store", "x-content-type-options": "nosniff" }
      if (Option.isSome(found.redirect)) {
        return HttpServerResponse.empty({ status: 302, headers: { ...headers, location: found.redirect.value } })
      }
      const size = found.file.size
      const range = parseRange(request.headers["range"], size)
      if (range === "unsatisfiable") {
        return JsonAnswer.json(
          { error: "range_not_satisfiable", details: `The file has ${size} bytes.` },
          { status: 416, headers: { ...headers, "content-range": `bytes */${size}` } }
        )
      }
      const part = range === "all" ? undefined : range
      const bytes = yield* handle(files.read(found.file, part))
      return HttpServerResponse.stream(bytes, {
        status: part ? 206 : 200,
        contentType: found.file.content_type,
        contentLength: part ? part.end - part.start + 1 : size,
        headers: {
          ...headers,
          "accept-ranges": "bytes",
          "content-disposition": found.disposition,
          ...(part ? { "content-range": `bytes ${part.start}-${part.end}/${size}` } : {})
        }
      })
    })
    return handlers
      .handle("reserve", ({ path, payload }) => reserve(path, payload))
      .handle("upload", ({ path }) => receive(path))
      .handle("complete", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(files.complete(p, path.deploymentId, path.key))).pipe(
          Effect.map((f) => ({ key: f.key, status: "ready" as const, size: f.size }))
        ))
      .handle("list", ({ path }) =>
        Effect.flatMap(caller, (p) => handle(files.list(p, path.deploymentId))).pipe(
          Effect.map((list) => ({ files: list.map(view) }))
        ))
      .handle("download", ({ path }) => download(path))
  }))

/** The files routes with links under the listening address (no public URL, no trusted proxy). */
export const layer = layerWith({})
