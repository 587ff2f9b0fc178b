/**
 * HOSTING_TRACES=off (extensions.md, configuration): the traces routes answer
 * 503 `service_unavailable`, and chat turns record nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Seed } from "@hosting/testing"
import { Effect } from "effect"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

describe("HTTP: observability switched off", () => {
  it.layer(layer({ traces: false }))((it) => {
    it.effect("listing, a trace and OTLP ingestion answer 503 service_unavailable for members; authentication still comes first", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const list = yield* raw("GET", `/agents/${team.account}/helper/observability/traces`, { token: team.tokens.member })
        expect(list.status).toBe(503)
        expectErrorBody(list.body, "service_unavailable")
        const one = yield* raw("GET", `/agents/${team.account}/helper/observability/traces/t-1`, { token: team.tokens.member })
        expect(one.status).toBe(503)
        expectErrorBody(one.body, "service_unavailable")
        const ingest = yield* raw("POST", "/otlp/v1/traces", { token: team.tokens.member, json: { resourceSpans: [] } })
        expect(ingest.status).toBe(503)
        expectErrorBody(ingest.body, "service_unavailable")
        expect((yield* raw("GET", `/agents/${team.account}/helper/observability/traces`)).status).toBe(401)
      }))
  })
})
