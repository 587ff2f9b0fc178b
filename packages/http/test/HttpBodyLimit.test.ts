/**
 * The body limit holds for bodies that do not declare their length.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { request } from "node:http"
import { expectErrorBody, layer, port, registerBody } from "./HttpTestServer.js"



describe("HTTP: streamed bodies", () => {
  it.layer(layer({ maxBodyBytes: 1024 }))((it) => {
    it.effect("a chunked body without Content-Length that grows past the limit is 413 too", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const serverPort = yield* port
        const result = yield* Effect.async<{ status: number; body: string }>((resume) => {
          const req = request({
            host: "127.0.0.1",
            port: serverPort,
            method: "POST",
            path: `/api/v1/agents/${team.account}/helper/register`,
            headers: { authorization: `Bearer ${team.tokens.owner}`, "content-type": "application/json", "transfer-encoding": "chunked" }
          }, (res) => {
            let body = ""
            res.on("data", (chunk) => (body += chunk))
            res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
          })
          req.on("error", () => resume(Effect.succeed({ status: -1, body: "" })))
          req.write(JSON.stringify(registerBody("b-1")).slice(0, -1))
          req.write(`, "readme": "${"y".repeat(4096)}"}`)
          req.end()
        })
        expect(result.status).toBe(413)
        expectErrorBody(JSON.parse(result.body), "payload_too_large")
      }))
  })
})
