/**
 * The body limit holds for bodies that do not declare their length.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { request } from "node:http"
import { expectErrorBody, layer, port, registerBody } from "./HttpTestServer.js"

/**
 * Registers with a chunked body: its first part, then, after `pauseMs`, a
 * readme that takes it past 1 KiB. Gives the status and body of the answer
 * (-1 when the connection failed).
 */
const chunkedRegister = (serverPort: number, account: string, token: string, pauseMs: number) =>
  Effect.async<{ status: number; body: string }>((resume) => {
    const req = request({
      host: "127.0.0.1",
      port: serverPort,
      method: "POST",
      path: `/api/v1/agents/${account}/helper/register`,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "transfer-encoding": "chunked" }
    }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, body })))
    })
    req.on("error", () => resume(Effect.succeed({ status: -1, body: "" })))
    req.write(JSON.stringify(registerBody("b-1")).slice(0, -1))
    const rest = () => {
      req.write(`, "readme": "${"y".repeat(4096)}"}`)
      req.end()
    }
    if (pauseMs === 0) rest()
    else setTimeout(rest, pauseMs)
  })

/** Each case: the test's title, and the pause between the body's two parts. */
const cases: ReadonlyArray<readonly [string, number]> = [
  ["a chunked body that passes the limit while it arrives is 413, and the client, still sending, reads it", 50],
  ["a chunked body without Content-Length that grows past the limit is 413 too", 0]
]

describe("HTTP: streamed bodies", () => {
  it.layer(layer({ maxBodyBytes: 1024 }))((it) => {
    for (const [title, pauseMs] of cases) {
      it.effect(title, () =>
        Effect.gen(function*() {
          const team = yield* Seed.team
          const result = yield* chunkedRegister(yield* port, team.account, team.tokens.owner, pauseMs)
          expect(result.status).toBe(413)
          expectErrorBody(JSON.parse(result.body), "payload_too_large")
        }))
    }
  })
})
