/** Single sign-on routes on a server with no OpenID provider configured. */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Effect } from "effect"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

describe("HTTP: single sign-on when no provider is configured", () => {
  withLayer(layer(), { excludeTestServices: true })((it) => {
    it.effect("login and callback are 404 sso_not_configured; the methods say so", () =>
      Effect.gen(function*() {
        const login = yield* raw("GET", "/oidc/login", {})
        expect(login.status).toBe(404)
        expectErrorBody(login.body, "sso_not_configured")
        expect((yield* raw("GET", "/session/methods", {})).body.oidc).toBeNull()
      }))
  })
})
