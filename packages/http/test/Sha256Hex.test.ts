/**
 * Tokens are hashed in requests with Node's SHA-256, which the Node server
 * gives under the key the core reads; it gives the hex the core's portable
 * default gives, for any text.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Identity } from "@hosting/core"
import { NodeServer } from "@hosting/http-node"
import { Context, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"

const portable = Context.get(Context.empty(), Identity.Sha256Hex)

describe("Sha256Hex", () => {
  it("Node's gives the hex of the portable default, for texts of any kind", () => {
    const texts = [
      "",
      "hst_0123456789ABCDEFGHIJKLMNOPQRSTUVabcdef",
      "csrf:a session",
      "ünïcödé ✓ 🚀",
      "a lone surrogate \ud800 and \udfff",
      "x".repeat(5000)
    ]
    for (const text of texts) expect(NodeServer.sha256Hex(text), JSON.stringify(text.slice(0, 40))).toBe(portable(text))
    expect(portable("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })

  it("a request served by the Node server hashes tokens with Node's", async () => {
    const app = Effect.gen(function*() {
      const context = yield* Effect.context<never>()
      return HttpServerResponse.unsafeJson({
        node: Context.get(context, Identity.Sha256Hex) === NodeServer.sha256Hex,
        hash: yield* Identity.hashToken("abc")
      })
    })
    const served = HttpServer.serve(app).pipe(Layer.provideMerge(NodeServer.layer({ port: 0, host: "127.0.0.1" })))
    const answer = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const server = Context.get(yield* Layer.build(served), HttpServer.HttpServer)
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      return yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/`).then((response) => response.json()))
    })))
    expect(answer).toEqual({ node: true, hash: portable("abc") })
    // Outside a server, the core hashes with its default.
    expect(Effect.runSync(Effect.map(Identity.Sha256Hex, (hash) => hash === portable))).toBe(true)
  })
})
