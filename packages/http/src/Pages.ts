/**
 * The small server-rendered pages (the device approval page, the end of a
 * single sign-on): self-contained HTML with no script and no external
 * resource, served with headers that keep them from being framed or cached.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/** Text made safe to put in HTML, in text and in quoted attributes. */
export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

const pageHeaders = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  // Same-origin: nothing leaks to other sites, and the page's own form posts carry their Origin (with no-referrer
  // a browser sends `Origin: null`, which the forms refuse as cross-site).
  "referrer-policy": "same-origin",
  "cache-control": "no-store"
}

/** A small, self-contained HTML page (no script, no external resource); `head` adds to its head (a refresh). */
export const page = (title: string, body: string, status = 200, headers: Record<string, string> = {}, head = "") =>
  HttpServerResponse.text(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
      `${head}<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5}` +
      `input,button{font-size:1rem;padding:.4rem .6rem;margin:.2rem 0}code{font-size:1.2rem;letter-spacing:.1rem}.error{color:#a00}</style></head>` +
      `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
    { contentType: "text/html; charset=utf-8" }
  ).pipe(HttpServerResponse.setStatus(status), HttpServerResponse.setHeaders({ ...pageHeaders, ...headers }))
