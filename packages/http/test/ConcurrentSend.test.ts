/**
 * A second send while a reply streams (issue 28) over HTTP: the settings
 * route of a deployment (who may change it, what it answers, where it shows)
 * and what a send answers under each strategy. The strategies themselves
 * under concurrency, on every storage, are `ConcurrentSendSuite`'s.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, Option } from "effect"
import { conversationPath, deployedAgent, newConversationId, send, settledHistory } from "./ChatHelpers.js"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

const settings = (token: string, deployment: string, body: unknown) =>
  raw("PUT", `/deployments/${deployment}/settings`, { token, json: body })

/** Waits until the conversation's latest reply has streamed some text: a send now arrives while it streams. */
const whileStreaming = (token: string, deployment: string, conversation: string) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const last = (yield* raw("GET", `${conversationPath(deployment, conversation)}/messages`, { token })).body.messages?.at(-1)
      if (last?.role === "assistant" && last.status === "streaming" && last.content !== "") return
      yield* Effect.sleep("5 millis")
    }
    throw new Error("the reply never streamed")
  })

const long = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ")

describe("HTTP: a second send while a reply streams (issue 28)", () => {
  // The live clock and a slow agent: a reply of 30 words streams for more than a second.
  withLayer(layer({ echo: { delay: "40 millis" } }), { excludeTestServices: true })((it) => {
    it.effect("PUT /deployments/{id}/settings: owners and admins set concurrent_send (200 with the settings), members 403, non-members 404; GET shows it", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const before = yield* raw("GET", `/deployments/${deployment}`, { token: team.tokens.member })
        expect(before.body.settings).toEqual({ concurrent_send: "interrupt" })

        const set = yield* settings(team.tokens.admin, deployment, { concurrent_send: "queue" })
        expect([set.status, set.body]).toEqual([200, { concurrent_send: "queue" }])
        const member = yield* settings(team.tokens.member, deployment, { concurrent_send: "reject" })
        expect(member.status).toBe(403)
        expectErrorBody(member.body, "forbidden")
        expect(member.body.details).toContain("changing a deployment's settings")
        const outsider = yield* settings(team.tokens.outsider, deployment, { concurrent_send: "reject" })
        expect(outsider.status).toBe(404)
        for (const body of [{}, { concurrent_send: "later" }, { concurrent_send: null }]) {
          const bad = yield* settings(team.tokens.owner, deployment, body)
          expect(bad.status).toBe(400)
          expectErrorBody(bad.body, "invalid_request")
        }
        expect((yield* settings(team.tokens.owner, "dep-nothing", { concurrent_send: "queue" })).status).toBe(404)
        const after = yield* raw("GET", `/deployments/${deployment}`, { token: team.tokens.member })
        expect(after.body.settings).toEqual({ concurrent_send: "queue" })
        const history = yield* raw("GET", `/agents/${team.account}/helper/deployment/history`, { token: team.tokens.member })
        expect(history.body.deployments[0].settings).toEqual({ concurrent_send: "queue" })
      }))

    it.effect("a settings change is audited and appends deployment.changed with the settings; setting it again changes nothing", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        expect((yield* settings(team.tokens.owner, deployment, { concurrent_send: "reject" })).status).toBe(200)
        expect((yield* settings(team.tokens.owner, deployment, { concurrent_send: "reject" })).status).toBe(200)
        const accounts = yield* Ports.AccountStore
        const log = yield* Ports.EventLog
        const account = Option.getOrThrow(yield* accounts.findByName(team.account))
        const events = (yield* log.after(account.id, Option.none(), 1000)).filter((e) => e.data["settings"] !== undefined)
        expect(events.map((e) => [e.type, e.data["deployment_id"], e.data["settings"]])).toEqual([
          ["deployment.changed", deployment, { concurrent_send: "reject" }]
        ])
        const audit = yield* raw("GET", `/accounts/${team.account}/audit`, { token: team.tokens.owner })
        const entries = audit.body.entries.filter((e: any) => e.action === "deployment.settings_changed")
        expect(entries.map((e: any) => [e.target, e.details])).toEqual([
          [deployment, `Set concurrent_send of ${deployment} to reject (was interrupt).`]
        ])
      }))

    it.effect("a deploy into the namespace keeps the settings of the deployment it supersedes", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const first = yield* deployedAgent(team)
        yield* settings(team.tokens.owner, first, { concurrent_send: "queue" })
        const again = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: {} })
        expect(again.status).toBe(201)
        expect(again.body.settings).toEqual({ concurrent_send: "queue" })
      }))

    it.effect("reject: a send while a reply streams answers 409 reply_in_progress and stores nothing; the send's own concurrent_send overrides the deployment's", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        yield* settings(team.tokens.owner, deployment, { concurrent_send: "reject" })
        const conversation = newConversationId()
        expect((yield* send(team.tokens.member, deployment, conversation, { content: long })).status).toBe(200)
        yield* whileStreaming(team.tokens.member, deployment, conversation)
        const refused = yield* send(team.tokens.member, deployment, conversation, { content: "again" })
        expect(refused.status).toBe(409)
        expect(refused.body).toMatchObject({ error: "reply_in_progress", code: "reply_in_progress" })
        expect(refused.body.details).toContain("still streaming")
        // Queued instead: its reply starts when the first one ends.
        const queued = yield* send(team.tokens.member, deployment, conversation, { content: "queued", concurrent_send: "queue" })
        expect(queued.status).toBe(200)
        const messages = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(messages.map((m) => [m.role, m.status, m.content])).toEqual([
          ["user", "complete", long],
          ["assistant", "complete", long],
          ["user", "complete", "queued"],
          ["assistant", "complete", "queued"]
        ])
      }))

    it.effect("interrupt stays the default: a send while a reply streams answers 200, the running reply is stored cancelled", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        expect((yield* send(team.tokens.member, deployment, conversation, { content: long })).status).toBe(200)
        yield* whileStreaming(team.tokens.member, deployment, conversation)
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "now" })).status).toBe(200)
        const messages = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(messages.map((m) => [m.role, m.status])).toEqual([
          ["user", "complete"],
          ["assistant", "cancelled"],
          ["user", "complete"],
          ["assistant", "complete"]
        ])
      }))
  })
})
