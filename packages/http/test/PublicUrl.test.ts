/**
 * The links the API hands out (a reservation's `upload_url`, the device
 * flow's URIs, the metadata's issuer) and the session cookie's `Secure` come
 * from the configured public URL, else from a trusted proxy's forwarded
 * headers, else from the listening address: never from a `Host` or
 * `X-Forwarded-*` a client chose.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type Answer, bearer, deployed, formBody, jsonBody, layer, port, send, world } from "./RouteHarness.js"

const forged = { host: "evil.example", "x-forwarded-host": "evil-too.example", "x-forwarded-proto": "https" }

/** The links of one server, asked with `headers`: a reservation's upload URL, the device flow's and the issuer. */
const linksWith = (headers: Record<string, string>) =>
  Effect.gen(function*() {
    const w = yield* world
    const token = w.team.tokens.owner
    const { deployment } = yield* deployed(w)
    const json = jsonBody({ filename: "a.txt", content_type: "text/plain", size: 1 })
    const reserved = yield* send({
      method: "POST",
      path: `/api/v1/deployments/${deployment}/files`,
      headers: { ...bearer(token), ...json.headers, ...headers },
      body: json.body
    })
    const form = formBody({ client_id: "cli" })
    const device = yield* send({ method: "POST", path: "/api/v1/oauth/device/code", headers: { ...form.headers, ...headers }, body: form.body })
    const metadata = yield* send({ method: "GET", path: "/api/v1/.well-known/oauth-authorization-server", headers })
    const session = yield* send({ method: "POST", path: "/api/v1/session", ...jsonBody({ token }), headers: { ...jsonBody({}).headers, ...headers } })
    const field = (answer: Answer, name: string) => (answer.json as Record<string, string>)[name]
    expect([reserved.status, device.status, metadata.status, session.status]).toEqual([201, 200, 200, 200])
    return {
      upload: field(reserved, "upload_url"),
      verification: field(device, "verification_uri"),
      complete: field(device, "verification_uri_complete"),
      issuer: field(metadata, "issuer"),
      secureCookie: (session.headers["set-cookie"] ?? "").includes("Secure")
    }
  })

/** The links must all start with `base`. */
const expectUnder = (links: Effect.Effect.Success<ReturnType<typeof linksWith>>, base: string) => {
  expect(links.upload).toMatch(new RegExp(`^${base}/deployments/[^/]+/files/[^/]+/content$`))
  expect(links.verification).toBe(`${base}/device`)
  expect(links.complete).toMatch(new RegExp(`^${base}/device\\?user_code=`))
  expect(links.issuer).toBe(base)
}

describe("HTTP: links are not built from headers a client chose", () => {
  withLayer(layer({ echo: { delay: 0 } }), { excludeTestServices: true })((it) => {
    it.effect("without a public URL or a trusted proxy, a forged Host or X-Forwarded-Host changes no link: they name the listening address", () =>
      Effect.gen(function*() {
        const listening = `http://127.0.0.1:${yield* port}/api/v1`
        const plain = yield* linksWith({})
        expectUnder(plain, listening)
        const links = yield* linksWith(forged)
        expectUnder(links, listening)
        expect(links.secureCookie).toBe(false)
      }))

    it.effect("behind a trusted proxy, the host and protocol it forwarded make the links (its own entry, not the client's)", () =>
      Effect.gen(function*() {
        const links = yield* linksWith({ ...forged, "x-forwarded-host": "evil.example, hosting.example", "x-forwarded-proto": "http, https" })
        expectUnder(links, "https://hosting.example/api/v1")
        expect(links.secureCookie).toBe(true)
        // A forwarded host that is not a host falls back to the listening address.
        const odd = yield* linksWith({ "x-forwarded-host": "evil.example/\">" })
        expectUnder(odd, `http://127.0.0.1:${yield* port}/api/v1`)
      }).pipe(Effect.provide(Layer.fresh(layer({ echo: { delay: 0 }, trustedProxies: 1 })))))

    it.effect("with a public URL, the links are under it whatever the headers say", () =>
      Effect.gen(function*() {
        const links = yield* linksWith(forged)
        expectUnder(links, "https://api.hosting.example/api/v1")
        expect(links.secureCookie).toBe(true)
      }).pipe(Effect.provide(Layer.fresh(layer({ echo: { delay: 0 }, publicUrl: "https://api.hosting.example/api/v1/" })))))
  })
})
