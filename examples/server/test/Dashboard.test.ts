/**
 * The example server serves a built dashboard at `/` beside the API: its
 * files, `index.html` for client-side routes, the API's JSON 404 under
 * /api/v1, caching by content hash and a page's security headers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runToExit, type Running, start } from "./process.js"

const dir = mkdtempSync(join(tmpdir(), "hosting-dashboard-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const site = join(dir, "site")
mkdirSync(join(site, "assets"), { recursive: true })
const indexHtml = "<!doctype html><title>Dashboard</title><script type=module src=/assets/app-1a2b.js></script>"
writeFileSync(join(site, "index.html"), indexHtml)
writeFileSync(join(site, "assets", "app-1a2b.js"), "console.log('app')")
writeFileSync(join(site, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>")
writeFileSync(join(site, ".env"), "SECRET=1")
writeFileSync(join(dir, "outside.txt"), "not served")

describe("example server: the dashboard at /", () => {
  let server: Running
  let root: string

  beforeAll(async () => {
    server = await start({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_OBJECT_STORE: "memory:", HOSTING_DASHBOARD: site })
    root = server.baseUrl.replace(/\/api\/v1$/, "")
  })
  afterAll(async () => {
    if (server.child.exitCode === null) await server.stop()
  })

  it("answers / and client-side routes with index.html, revalidated each time, with the page's security headers", async () => {
    for (const path of ["/", "/agents/acme/helper", "/chat?conversation=c-1"]) {
      const response = await fetch(`${root}${path}`)
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(await response.text()).toBe(indexHtml)
      expect(response.headers.get("cache-control")).toBe("no-cache")
      expect(response.headers.get("content-security-policy")).toContain("default-src 'self'")
      expect(response.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      expect(response.headers.get("x-frame-options")).toBe("DENY")
      expect(response.headers.get("x-content-type-options")).toBe("nosniff")
      expect(response.headers.get("referrer-policy")).toBe("no-referrer")
    }
  })

  it("serves built files with their type; hashed assets are immutable; an ETag revalidates to 304", async () => {
    const script = await fetch(`${root}/assets/app-1a2b.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(await script.text()).toBe("console.log('app')")
    const icon = await fetch(`${root}/favicon.svg`)
    expect(icon.headers.get("content-type")).toBe("image/svg+xml")
    const etag = icon.headers.get("etag")!
    expect(etag).toMatch(/^"[0-9a-f]{24}"$/)
    const again = await fetch(`${root}/favicon.svg`, { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
  })

  it("a missing asset and an unknown API path are JSON 404s; the API still answers beside the dashboard", async () => {
    for (const path of ["/assets/missing.js", "/api/v1/no-such-route", "/api/v1"]) {
      const response = await fetch(`${root}${path}`)
      expect(response.status).toBe(404)
      const body = await response.json() as { error: string; details: string }
      expect(body.error).toBe("not_found")
    }
    const catalog = await fetch(`${server.baseUrl}/agents`)
    expect(catalog.status).toBe(200)
  })

  it("serves nothing outside the folder and no dot files", async () => {
    for (const path of ["/../outside.txt", "/%2e%2e/outside.txt", "/.env", "/assets/..%2f..%2foutside.txt"]) {
      const response = await fetch(`${root}${path}`)
      const text = await response.text()
      expect(text).not.toContain("not served")
      expect(text).not.toContain("SECRET")
    }
  })

  it("a path with '.' or '..' segments, raw or escaped, is a 400 and never reaches a route or the page", async () => {
    // node:http sends the path as written; fetch would resolve the dots first.
    const send = (method: string, path: string) =>
      new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
        const url = new URL(root)
        const req = request({ host: url.hostname, port: url.port, method, path, headers: { authorization: "Bearer t" } }, (res) => {
          let body = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => (body += chunk))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"] ?? "", body }))
        })
        req.on("error", reject)
        req.end(method === "POST" ? JSON.stringify({ content: "hi" }) : undefined)
      })
    const paths = [
      "/api/v1/deployments/dep-1/files/../../../../etc/passwd",
      "/api/v1/deployments/dep-1/files/%2e%2e/%2E%2e/x",
      "/api/v1/agents/acme/helper/./config",
      "/api/v1/deployments/dep-1/files/.%2e\\.%2e\\x",
      "/assets/../index.html",
      "/x/../api/v1/agents"
    ]
    for (const path of paths) {
      const response = await send("GET", path)
      expect(response.status, path).toBe(400)
      expect(response.type, path).toContain("application/json")
      expect(JSON.parse(response.body), path).toEqual({ error: "invalid_request", details: expect.stringContaining("'..'") })
    }
    const conversation = crypto.randomUUID()
    const sent = await send("POST", `/api/v1/deployments/../messaging/conversations/${conversation}/messages`)
    expect(sent.status).toBe(400)
    // Dots inside a name or in the query are not segments.
    expect((await send("GET", "/favicon.svg")).status).toBe(200)
    expect((await send("GET", "/api/v1/agents/acme/helper?next=../x")).status).toBe(401) // routed: the token is unknown
  })

  it("a HOSTING_DASHBOARD folder without index.html stops the start with a clear line", async () => {
    const result = await runToExit({ HOSTING_DATABASE_URL: "sqlite::memory:", HOSTING_OBJECT_STORE: "memory:", HOSTING_DASHBOARD: dir })
    expect(result.code).toBe(1)
    expect(result.output).toContain(`HOSTING_DASHBOARD: ${dir} has no index.html`)
  })
})
