/**
 * Failures that never reach a handler still answer with the {error, details} body.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { expectErrorBody, layer, raw, registerBody } from "./HttpTestServer.js"



describe("HTTP: error bodies", () => {
  it.layer(layer({ maxBodyBytes: 64 * 1024 }))((it) => {
    it.effect("malformed JSON is 400 invalid_json and changes nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const r = yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, text: "{\"build_id\": " })
        expect(r.status).toBe(400)
        expectErrorBody(r.body, "invalid_json")
        expect((yield* raw("GET", `/agents/${team.account}/helper`, { token: team.tokens.owner })).status).toBe(404)
      }))

    it.effect("an unknown route is a 404 with the JSON error body", () =>
      Effect.gen(function*() {
        const r = yield* raw("GET", "/no/such/route")
        expect(r.status).toBe(404)
        expectErrorBody(r.body, "not_found")
        expect(r.headers["content-type"]).toContain("application/json")
      }))

    it.effect("a body over the limit is 413 payload_too_large, declared or streamed", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const big = registerBody("b-1", { readme: "x".repeat(100 * 1024) })
        const r = yield* raw("POST", `/agents/${team.account}/helper/register`, { token: team.tokens.owner, json: big })
        expect(r.status).toBe(413)
        expectErrorBody(r.body, "payload_too_large")
        expect((yield* raw("GET", `/agents/${team.account}/helper`, { token: team.tokens.owner })).status).toBe(404)
      }))

    it.effect("the OpenAPI document and the reference page are served under /api/v1", () =>
      Effect.gen(function*() {
        const doc = yield* raw("GET", "/openapi.json")
        expect(doc.status).toBe(200)
        expect(doc.body.openapi).toMatch(/^3\./)
        expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining([
          "/api/v1/agents",
          "/api/v1/agents/{account}/{name}",
          "/api/v1/agents/{account}/{name}/register",
          "/api/v1/agents/{account}/{name}/publish",
          "/api/v1/agents/{account}/{name}/config",
          "/api/v1/me",
          "/api/v1/accounts/{account}"
        ]))
        // 400s are documented as the body the server sends ({ error, details }), not the platform's decode error.
        const text = JSON.stringify(doc.body)
        expect(text).not.toContain("HttpApiDecodeError")
        for (const [path, operations] of Object.entries<any>(doc.body.paths)) {
          for (const [method, operation] of Object.entries<any>(operations)) {
            const schema = operation.responses?.["400"]?.content?.["application/json"]?.schema
            if (schema === undefined) continue
            const refs = JSON.stringify(schema)
            expect(refs, `${method} ${path}`).toContain("#/components/schemas/BadRequest")
          }
        }
        expect(doc.body.components.schemas.BadRequest.required).toEqual(["error", "details"])
        // The reference page is loaded on its first request, then kept.
        for (let i = 0; i < 2; i++) {
          const page = yield* raw("GET", "/docs")
          expect(page.status).toBe(200)
          expect(String(page.body)).toContain("<html")
          expect(String(page.body)).toContain("Agent hosting service")
        }
      }))
  })
})
