/**
 * Serves a built single-page app (the dashboard) beside the API: the files of
 * a folder, read once at start, with `index.html` for every other path so
 * the app can route on the client. Paths under the API's base keep the API's
 * JSON 404. Every answer carries the security headers of a page.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Path from "@effect/platform/Path"
import { HostingApi } from "@hosting/api"
import { Effect } from "effect"

/** Content types of the files a Vite build writes. */
const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".ico": "image/x-icon",
  ".webp": "image/webp",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json"
}

/**
 * The page's rules: scripts, styles and connections only from this origin,
 * no framing, no referrer, no sniffing.
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()"
}

interface Asset {
  readonly body: Uint8Array
  readonly contentType: string
  readonly etag: string
  readonly cacheControl: string
}

export interface StaticSiteOptions {
  /** The folder of the built app; it must hold `index.html`. */
  readonly directory: string
}

/** Every file below `directory`, by URL path (`/assets/app.js`). Dot files are left out. */
const readAssets = (directory: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const assets = new Map<string, Asset>()
    const names = yield* fs.readDirectory(directory, { recursive: true })
    for (const name of names) {
      const segments = name.split(path.sep)
      if (segments.some((s) => s.startsWith("."))) continue
      const file = path.join(directory, name)
      if ((yield* fs.stat(file)).type !== "File") continue
      const body = yield* fs.readFile(file)
      const digest = new Uint8Array(yield* Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", body as Uint8Array<ArrayBuffer>)))
      const etag = `"${Array.from(digest.subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("")}"`
      const urlPath = `/${segments.join("/")}`
      assets.set(urlPath, {
        body,
        contentType: contentTypes[path.extname(name).toLowerCase()] ?? "application/octet-stream",
        etag,
        // Vite names what is under assets/ by content hash: those never change.
        cacheControl: urlPath.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache"
      })
    }
    return assets
  })

const respond = (asset: Asset, ifNoneMatch: string | undefined) =>
  ifNoneMatch === asset.etag
    ? HttpServerResponse.empty({ status: 304, headers: { ...securityHeaders, etag: asset.etag, "cache-control": asset.cacheControl } })
    : HttpServerResponse.uint8Array(asset.body, {
      contentType: asset.contentType,
      headers: { ...securityHeaders, etag: asset.etag, "cache-control": asset.cacheControl }
    })

/** Serves the app at `/`, beside the API; needs FileSystem and Path (from the platform's Node layer). */
export const layer = (options: StaticSiteOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const assets = yield* readAssets(options.directory)
      const index = assets.get("/index.html")
      if (index === undefined) return yield* Effect.dieMessage(`${options.directory} has no index.html: build the dashboard first`)
      const handler = Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const pathname = new URL(request.url, "http://x").pathname
        if (pathname === HostingApi.basePath || pathname.startsWith(`${HostingApi.basePath}/`)) {
          return yield* Effect.fail(new HttpServerError.RouteNotFound({ request }))
        }
        let decoded = pathname
        try {
          decoded = decodeURIComponent(pathname)
        } catch {
          // an invalid escape names no file: the app's page answers
        }
        const asset = assets.get(decoded) ?? (decoded.startsWith("/assets/") ? undefined : index)
        if (asset === undefined) return yield* Effect.fail(new HttpServerError.RouteNotFound({ request }))
        return respond(asset, request.headers["if-none-match"])
      })
      yield* router.get("*", handler)
    })
  )
