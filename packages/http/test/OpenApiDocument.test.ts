/**
 * The OpenAPI document: what /api/v1/openapi.json serves is the document
 * generated from @hosting/api, it names every route by its operationId and
 * summary, and its error answers are the `{ error, details }` body. The
 * answers of the route-wide tests (AuthorizationMatrix, InputProperties) are
 * validated against it; `pnpm run lint:openapi` lints it with Redocly.
 */
import { describe, expect, it, layer as withLayer } from "@effect/vitest"
import { Effect } from "effect"
import { document, endpoints, layer, send } from "./RouteHarness.js"

type Json = Record<string, any>

const operations = (): Array<[string, string, Json]> =>
  Object.entries<Json>(document["paths"]).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, operation]) => [path, method, operation] as [string, string, Json])
  )

describe("OpenAPI document", () => {
  it("has one operation per route, named by the route's operationId, each with a summary", () => {
    const ids = operations().map(([, , operation]) => operation["operationId"]).sort()
    expect(ids).toEqual(endpoints.map((e) => e.id).sort())
    expect(new Set(ids).size).toBe(ids.length)
    for (const [path, method, operation] of operations()) {
      expect(typeof operation["summary"], `${method} ${path}`).toBe("string")
    }
  })

  it("documents every error answer as { error, details } with both fields strings (the approval page's, as HTML)", () => {
    const schemas: Json = document["components"]["schemas"]
    for (const [path, method, operation] of operations()) {
      for (const [status, response] of Object.entries<Json>(operation["responses"])) {
        if (Number(status) < 400) continue
        // The approval page answers its form errors as pages.
        if (response["content"]?.["application/json"] === undefined) {
          expect(Object.keys(response["content"] ?? {}), `${method} ${path} ${status}`).toEqual(["text/html"])
          continue
        }
        const schema: Json = response["content"]?.["application/json"]?.["schema"] ?? {}
        // The MCP routes answer their transport's refusals as the protocol does: a JSON-RPC error (docs/protocols.md).
        const isJsonRpcError = (s: Json) => String(operation["operationId"]).startsWith("mcp.") && s["properties"]?.["jsonrpc"] !== undefined
        if (isJsonRpcError(schema)) continue
        const refs: Array<string> = schema["$ref"] !== undefined
          ? [schema["$ref"]]
          : (schema["anyOf"] ?? []).filter((s: Json) => !isJsonRpcError(s)).map((s: Json) => s["$ref"])
        expect(refs.length, `${method} ${path} ${status}`).toBeGreaterThan(0)
        for (const r of refs) {
          const schema = schemas[r.replace("#/components/schemas/", "")]
          expect(schema?.["properties"]?.["error"]?.["type"], `${method} ${path} ${status} ${r}`).toBe("string")
          expect(schema?.["properties"]?.["details"]?.["type"], `${method} ${path} ${status} ${r}`).toBe("string")
        }
      }
    }
  })

  withLayer(layer(), { excludeTestServices: true })((it) => {
    it.effect("GET /api/v1/openapi.json serves the generated document", () =>
      Effect.gen(function*() {
        const served = yield* send({ method: "GET", path: "/api/v1/openapi.json" })
        expect(served.status).toBe(200)
        expect(served.json).toEqual(JSON.parse(JSON.stringify(document)))
      }))
  })
})
