/**
 * Helpers for chat tests: an agent deployed on the fake cluster, and calls
 * to the chat routes.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import type { Seed } from "@hosting/testing"
import { port, raw, registerBody } from "./HttpTestServer.js"
import { open } from "./sse.js"

/** Registers, publishes and deploys an agent for the team; resolves with the deployment id. */
export const deployedAgent = (team: Seed.Team) =>
  Effect.gen(function*() {
    const base = `/agents/${team.account}/helper`
    expect((yield* raw("POST", `${base}/register`, { token: team.tokens.owner, json: registerBody("b-1") })).status).toBe(201)
    expect((yield* raw("POST", `${base}/publish`, { token: team.tokens.owner, json: { build_id: "b-1", version: "1.0.0" } })).status).toBe(201)
    const deployed = yield* raw("POST", `${base}/deployments`, { token: team.tokens.owner, json: {} })
    expect(deployed.status).toBe(201)
    return deployed.body.id as string
  })

export const newConversationId = () => globalThis.crypto.randomUUID()

export const conversationPath = (deployment: string, conversation: string) =>
  `/deployments/${deployment}/messaging/conversations/${conversation}`

export const send = (token: string, deployment: string, conversation: string, body: Record<string, unknown>) =>
  raw("POST", `${conversationPath(deployment, conversation)}/messages`, { token, json: body })

/** Opens the reply stream of a conversation. */
export const replies = (token: string, deployment: string, conversation: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(port, (p) =>
    Effect.promise(() =>
      open(`http://127.0.0.1:${p}/api/v1${conversationPath(deployment, conversation)}/stream`, {
        authorization: `Bearer ${token}`,
        ...headers
      })
    ))

/** Polls the history until the latest reply has left `streaming`. */
export const settledHistory = (token: string, deployment: string, conversation: string) =>
  Effect.gen(function*() {
    const deadline = Date.now() + 10_000
    while (true) {
      const h = yield* raw("GET", `${conversationPath(deployment, conversation)}/messages`, { token })
      const last = h.body.messages?.at(-1)
      if (last?.role === "assistant" && last.status !== "streaming") return h.body.messages as Array<any>
      if (Date.now() > deadline) throw new Error(`reply still streaming: ${JSON.stringify(h.body)}`)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
  })
