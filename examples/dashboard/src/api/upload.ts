/**
 * File uploads with progress: reserve through the typed client, send the
 * bytes with `XMLHttpRequest` (whose upload events report progress, which
 * `fetch` does not), then complete. The bytes go to the reservation's
 * `upload_url`: this API's own route (with the cookie and the CSRF value), or
 * a presigned object-store URL, which gets neither.
 */
import * as id from "./ids"
import { call, csrf, Problem } from "./runtime"

/** A file that is ready to attach or download. */
export interface Uploaded {
  readonly key: string
  readonly filename: string
  readonly contentType: string
  readonly size: number
}

/** Bytes sent so far, of the whole. */
export type OnProgress = (sent: number, total: number) => void

const problemOfXhr = (xhr: XMLHttpRequest): Problem => {
  let error = xhr.status >= 500 ? "server_error" : "upload_failed"
  let details = `The upload was refused (${xhr.status}).`
  try {
    const body = JSON.parse(xhr.responseText) as Record<string, unknown>
    if (typeof body["error"] === "string") error = body["error"]
    if (typeof body["details"] === "string") details = body["details"]
  } catch {
    // an object store's XML or an empty body: the status says enough
  }
  return new Problem({ kind: "response", status: xhr.status, error, details })
}

const send = (url: string, file: Blob, contentType: string, own: boolean, onProgress: OnProgress, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open("PUT", url)
    xhr.setRequestHeader("content-type", contentType)
    const token = csrf()
    if (own && token !== undefined) xhr.setRequestHeader("x-csrf-token", token)
    xhr.withCredentials = false
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(problemOfXhr(xhr)))
    xhr.onerror = () =>
      reject(new Problem({ kind: "network", status: undefined, error: "network_error", details: "The connection broke during the upload." }))
    xhr.onabort = () => reject(new DOMException("The upload was stopped", "AbortError"))
    signal?.addEventListener("abort", () => xhr.abort(), { once: true })
    xhr.send(file)
  })

/** Reserves, uploads (reporting progress) and completes one file of a deployment. */
export const uploadFile = async (deploymentId: string, file: File, onProgress: OnProgress, signal?: AbortSignal): Promise<Uploaded> => {
  const contentType = file.type === "" ? "application/octet-stream" : file.type
  const deployment = id.deployment(deploymentId)
  const reserved = await call(
    (client) => client.files.reserve({ path: { deploymentId: deployment }, payload: { filename: file.name, content_type: contentType, size: file.size } }),
    signal
  )
  // The API's own upload route is recognised by its path and called on this origin (a proxy in front may
  // have given the server another host name); anything else is a presigned URL.
  const ownPath = contentPath(deploymentId, reserved.key)
  const target = new URL(reserved.upload_url, window.location.href)
  const own = target.pathname === ownPath
  onProgress(0, file.size)
  await send(own ? ownPath : target.href, file, reserved.content_type, own, onProgress, signal)
  onProgress(file.size, file.size)
  const completed = await call((client) => client.files.complete({ path: { deploymentId: deployment, key: reserved.key } }), signal)
  return { key: completed.key, filename: reserved.filename, contentType: reserved.content_type, size: completed.size }
}

/** Where a file of a deployment downloads from (the cookie authenticates the browser's own request). */
export const downloadUrl = (deploymentId: string, key: string) => contentPath(deploymentId, key)

const contentPath = (deploymentId: string, key: string) =>
  `/api/v1/deployments/${encodeURIComponent(deploymentId)}/files/${encodeURIComponent(key)}/content`
