/**
 * JSON answers kept as text (internal/jsonAnswer.ts) against the platform's
 * `HttpServerResponse.unsafeJson`, the reference: the same status, headers
 * (the length among them) and body; and over a real server, the length a
 * client is told is the length it reads, in any script.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cookies from "@effect/platform/Cookies"
import { describe, expect, it } from "@effect/vitest"
import { NodeServer } from "@hosting/http-node"
import { Effect, FastCheck as fc, Layer } from "effect"
import { request as httpRequest } from "node:http"
import { json, textOf, utf8Length } from "../src/internal/jsonAnswer.js"

const encoder = new TextEncoder()

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 }).map((units) => String.fromCharCode(...units))
const texts = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), codeUnits)

/** What the platform's answer holds, for comparison: its status, headers, cookies and body text. */
const seen = (response: HttpServerResponse.HttpServerResponse) => ({
  status: response.status,
  headers: { ...response.headers },
  cookies: Cookies.toSetCookieHeaders(response.cookies),
  text: textOf(response.body)
})

describe("JSON answers kept as text (the platform's unsafeJson is the reference)", () => {
  it("counts a text's length in UTF-8 as TextEncoder encodes it, lone surrogates included", () => {
    fc.assert(fc.property(texts, (text) => utf8Length(text) === encoder.encode(text).length), { numRuns: 2000, seed: 11 })
    for (const text of ["", "plain", "é", "€", "🌍", "\ud800", "\udc00", "\ud800x", "a\udbff\udfffb", "\udc00\ud800"]) {
      expect(utf8Length(text), JSON.stringify(text)).toBe(encoder.encode(text).length)
    }
    // Long texts, of three bytes a code unit at most, on each side of 65,536 code units, and one far past it.
    for (const text of ["€".repeat(65_536), "€".repeat(65_535) + "🌍", "€".repeat(90_000), "é".repeat(70_000), "a".repeat(300_000) + "\ud800"]) {
      expect(utf8Length(text), `${text.length} code units`).toBe(encoder.encode(text).length)
    }
  })

  it("answers what unsafeJson answers: status, headers with the content type and length, cookies, body", () => {
    const cookies = Cookies.unsafeSet(Cookies.empty, "session", "s1", { httpOnly: true })
    const values: ReadonlyArray<unknown> = [
      { error: "not_found", details: "No agent \u00e9 \ud83c\udf0d here." },
      [1, "two", null, { three: 3 }],
      "text",
      0,
      null,
      { lone: "\ud800" }
    ]
    const options: ReadonlyArray<HttpServerResponse.Options.WithContentType | undefined> = [
      undefined,
      { status: 404 },
      { status: 201, headers: { "cache-control": "no-store", "X-Mixed": "1" }, cookies },
      { contentType: "application/problem+json", status: 400 },
      { headers: { "content-type": "application/vnd.custom+json" } }
    ]
    for (const value of values) {
      for (const option of options) {
        const ours = json(value, option)
        const reference = HttpServerResponse.unsafeJson(value, option)
        expect(seen(ours), `${JSON.stringify(value)} ${JSON.stringify(option)}`).toEqual(seen(reference))
        expect(ours.body._tag).toBe("Raw")
      }
    }
  })

  it("throws where JSON.stringify throws, and leaves what JSON cannot write to the platform", () => {
    const cycle: Record<string, unknown> = {}
    cycle["self"] = cycle
    expect(() => json(cycle)).toThrow()
    expect(() => json({ big: 1n })).toThrow()
    expect(seen(json(undefined))).toEqual(seen(HttpServerResponse.unsafeJson(undefined)))
  })

  it.scoped("over a server: the length the client is told is the length it reads, in one piece, in any script", () =>
    Effect.gen(function*() {
      const value = { text: "h\u00e9llo \ud83c\udf0d \u4e16\u754c", lone: "\ud800", list: Array.from({ length: 50 }, (_, i) => `item ${i}`) }
      yield* HttpServer.serveEffect(Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        return json(request.url === "/small" ? { ok: true } : value, { headers: { "cache-control": "no-store" } })
      }))
      const server = yield* HttpServer.HttpServer
      const port = server.address._tag === "TcpAddress" ? server.address.port : 0
      for (const path of ["/big", "/small"]) {
        const answer = yield* Effect.async<{ headers: Record<string, unknown>; bytes: Buffer }, Error>((resume) => {
          const req = httpRequest({ host: "127.0.0.1", port, path, agent: false }, (response) => {
            const chunks: Array<Buffer> = []
            response.on("data", (chunk: Buffer) => chunks.push(chunk))
            response.on("end", () => resume(Effect.succeed({ headers: response.headers, bytes: Buffer.concat(chunks) })))
          })
          req.on("error", (error) => resume(Effect.fail(error)))
          req.end()
        })
        expect(answer.headers["transfer-encoding"], path).toBeUndefined()
        expect(answer.headers["content-length"], path).toBe(String(answer.bytes.length))
        expect(answer.headers["content-type"], path).toBe("application/json")
        expect(answer.headers["cache-control"], path).toBe("no-store")
        expect(answer.bytes.toString("utf8"), path).toBe(JSON.stringify(path === "/small" ? { ok: true } : value))
      }
    }).pipe(Effect.provide(Layer.provideMerge(Layer.empty, NodeServer.layer({ port: 0, host: "127.0.0.1" })))))
})
