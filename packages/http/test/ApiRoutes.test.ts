/**
 * The routes as the server reads them from @hosting/api (ApiRoutes): a
 * link built for a route is matched by that route's own path pattern with
 * the same parameters, and links escape what they fill in.
 */
import { describe, expect, it } from "@effect/vitest"
import { FilesApi, HostingApi, OAuthApi } from "@hosting/api"
import { ApiRoutes } from "@hosting/http"

describe("ApiRoutes", () => {
  it("a link to any route under the prefix is matched by the route's pattern, with its parameters", () => {
    const under = ApiRoutes.routes.filter((r) => r.path.startsWith(`${HostingApi.basePath}/`))
    expect(under.length).toBeGreaterThan(30)
    for (const route of under) {
      const names = route.path.split("/").filter((s) => s.startsWith(":")).map((s) => s.slice(1))
      const params = Object.fromEntries(names.map((name, i) => [name, `v${i}-x`]))
      const link = ApiRoutes.link("https://example.test/api/v1", route, params)
      const pathname = new URL(link).pathname
      expect({ ...ApiRoutes.pattern(route.path).exec(pathname)?.groups }, route.id).toEqual(params)
    }
  })

  it("links escape parameters, and refuse a missing one or a route outside the prefix", () => {
    const upload = ApiRoutes.routeOf(FilesApi.FilesApi, "upload")
    expect(ApiRoutes.link("http://h/api/v1", upload, { deploymentId: "d-1", fileKey: "a b/c" }))
      .toBe("http://h/api/v1/deployments/d-1/files/a%20b%2Fc/content")
    expect(() => ApiRoutes.link("http://h/api/v1", upload, { deploymentId: "d-1" })).toThrow(/fileKey/)
    expect(ApiRoutes.link("http://h/api/v1", ApiRoutes.routeOf(OAuthApi.OAuthApi, "token"))).toBe("http://h/api/v1/oauth/token")
    const wellKnown = ApiRoutes.routes.find((r) => r.id === "wellKnown.metadata")!
    expect(() => ApiRoutes.link("http://h/api/v1", wellKnown)).toThrow(/not under/)
  })

  it("a pattern takes one segment per parameter, and a narrower segment when told", () => {
    const send = ApiRoutes.pattern("/api/v1/deployments/:deploymentId/messages", { segment: "[^/%?#]+" })
    expect(send.exec("/api/v1/deployments/d-1/messages")?.groups).toEqual({ deploymentId: "d-1" })
    expect(send.test("/api/v1/deployments/d%2F1/messages")).toBe(false)
    expect(send.test("/api/v1/deployments/d/1/messages")).toBe(false)
    expect(send.test("/api/v1/deployments/d-1/messages/")).toBe(false)
    expect(ApiRoutes.pattern("/api/v1/x/:id", { trailingSlash: true }).test("/api/v1/x/1/")).toBe(true)
  })
})
