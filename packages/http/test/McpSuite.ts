/**
 * Every deployment as an MCP server, and the catalog as one (issue 29),
 * driven by the official `@modelcontextprotocol/sdk` client over streamable
 * HTTP: the tool `send_message` (a turn of the caller's conversation, its
 * progress while the reply streams, the conversation rules), the caller's
 * deployments as resources, and the protocol's errors.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Metrics, type Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, type Layer, Metric } from "effect"
import { layer, port, raw } from "./HttpTestServer.js"

/** The per-thread message limit of the suite's server: the third message of a conversation is refused. */
const messageLimit = 2

/** The most streams a user of the suite's server holds at once (event and reply streams, MCP calls). */
const maxStreamsPerUser = 3

/** An SDK client connected to an MCP server of ours as the token's holder; closed with the scope. */
const connected = (url: string, token: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "hosting-test", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
      await client.connect(transport)
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** The error a promise fails with (its JSON-RPC code when it has one), or "resolved". */
const failureOf = (promise: Promise<unknown>) =>
  Effect.promise(() => promise.then(() => ({ code: 0, message: "resolved" }), (e: any) => ({ code: e?.code as number, message: String(e?.message) })))

type ToolResult = {
  readonly isError?: boolean
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly structuredContent?: Record<string, unknown>
}

const textOf = (result: ToolResult) => result.content.map((c) => c.text ?? "").join("\n")

/** A team with a running deployment of an agent whose spec has a name and a description. */
const deployed = Effect.gen(function*() {
  const team = yield* Seed.team
  const spec = "name: helper\ndescription: Answers questions\n"
  const registered = yield* raw("POST", `/agents/${team.account}/helper/register`, {
    token: team.tokens.owner,
    json: { build_id: "b-1", registry: "ghcr.io/acme", spec_content: spec }
  })
  expect(registered.status).toBe(201)
  const made = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: { build_id: "b-1" } })
  expect(made.status).toBe(201)
  const deployment = made.body.id as string
  const base = `http://127.0.0.1:${yield* port}/api/v1`
  return { team, deployment, base, url: `${base}/deployments/${deployment}/mcp` }
})

const historyOf = (token: string, deployment: string, conversation: string) =>
  Effect.map(
    raw("GET", `/deployments/${deployment}/messaging/conversations/${conversation}/messages`, { token }),
    (answer) => (answer.body.messages ?? []).map((m: any) => `${m.role}:${m.content}:${m.status}`) as Array<string>
  )

/** The suite on the given storage (in memory without one). */
export const run = (name: string, storage?: Layer.Layer<Ports.StoragePorts>) =>
  describe(`HTTP on ${name} storage: every deployment is an MCP server, the catalog too (issue 29)`, () => {
    // Real time: the echo agent sleeps between chunks.
    withLayer(
      layer({ echo: { delay: "20 millis" }, messageLimit, maxStreamsPerUser, ...(storage === undefined ? {} : { storageLayer: storage }) }),
      { excludeTestServices: true }
    )((it) => {
      it.scoped("a deployment's server names the agent and lists one tool, send_message; members only (others: 404, no token: 401)", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const client = yield* connected(url, team.tokens.member)
          expect(client.getServerVersion()?.name).toBe(`${team.account}/helper`)
          const { tools } = yield* Effect.promise(() => client.listTools())
          expect(tools.map((t) => t.name)).toEqual(["send_message"])
          expect(tools[0]!.inputSchema).toMatchObject({ type: "object", required: ["message"] })
          expect(tools[0]!.description).toContain("Answers questions")
          const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }
          const accept = { accept: "application/json, text/event-stream" }
          expect((yield* raw("POST", `/deployments/${deployment}/mcp`, { json: initialize, headers: accept })).status).toBe(401)
          const outsider = yield* raw("POST", `/deployments/${deployment}/mcp`, { token: team.tokens.outsider, json: initialize, headers: accept })
          expect(outsider.status).toBe(404)
          expect(outsider.body.error).toBe("deployment_not_found")
        }))

      it.scoped("send_message runs a turn of a new conversation and answers the reply with its conversation id; progress follows the reply; the id continues it", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const client = yield* connected(url, team.tokens.member)
          const progress: Array<{ progress: number; message?: string | undefined }> = []
          const first = (yield* Effect.promise(() =>
            client.callTool({ name: "send_message", arguments: { message: "one two three four" } }, undefined, {
              onprogress: (p) => progress.push(p)
            })
          )) as ToolResult
          expect(first.isError).toBeFalsy()
          expect(first.content[0]).toEqual({ type: "text", text: "one two three four" })
          const conversation = first.structuredContent?.["conversation_id"] as string
          expect(first.structuredContent).toMatchObject({ reply: "one two three four", conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
          expect(textOf(first)).toContain(conversation)
          // The reply's chunks as they arrived, in order, adding up to the reply.
          expect(progress.length).toBeGreaterThanOrEqual(2)
          expect(progress.map((p) => p.message ?? "").join("")).toBe("one two three four")
          expect(progress.every((p, i) => i === 0 || p.progress > progress[i - 1]!.progress)).toBe(true)
          // The conversation is the caller's, stored as any other.
          expect(yield* historyOf(team.tokens.member, deployment, conversation)).toEqual([
            "user:one two three four:complete",
            "assistant:one two three four:complete"
          ])
          const second = (yield* Effect.promise(() =>
            client.callTool({ name: "send_message", arguments: { message: "and again", conversation_id: conversation } })
          )) as ToolResult
          expect(second.structuredContent).toMatchObject({ reply: "and again", conversation_id: conversation })
          expect(yield* historyOf(team.tokens.member, deployment, conversation)).toHaveLength(4)
        }))

      it.scoped("under concurrent_send queue, a call made while a reply streams answers its own reply, not the one before", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const settings = yield* raw("PUT", `/deployments/${deployment}/settings`, { token: team.tokens.owner, json: { concurrent_send: "queue" } })
          expect(settings.status).toBe(200)
          const client = yield* connected(url, team.tokens.member)
          // A conversation id of the client's choosing starts that conversation.
          const conversation_id = globalThis.crypto.randomUUID()
          const long = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ")
          const [first, second] = yield* Effect.promise(async () => {
            let started!: () => void
            const streaming = new Promise<void>((resolve) => (started = resolve))
            const first = client.callTool({ name: "send_message", arguments: { message: long, conversation_id } }, undefined, {
              onprogress: () => started()
            })
            await streaming
            const second = client.callTool({ name: "send_message", arguments: { message: "queued after", conversation_id } })
            return (await Promise.all([first, second])) as Array<ToolResult>
          })
          expect(first!.structuredContent).toMatchObject({ reply: long, conversation_id })
          expect(second!.structuredContent).toMatchObject({ reply: "queued after", conversation_id })
          expect(yield* historyOf(team.tokens.member, deployment, conversation_id)).toEqual([
            `user:${long}:complete`,
            `assistant:${long}:complete`,
            "user:queued after:complete",
            "assistant:queued after:complete"
          ])
        }))

      it.scoped("a client that goes away mid-call stops the following of the reply at once (no reply stream left open); the turn's reply still completes and is stored", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const openStreams = Effect.map(Metric.value(Metrics.replyStreamsOpen), (state) => state.value)
          const before = yield* openStreams
          const client = yield* connected(url, team.tokens.member)
          const conversation_id = globalThis.crypto.randomUUID()
          // About three seconds of reply: long enough to see the server let go of it while it streams.
          const long = Array.from({ length: 150 }, (_, i) => `x${i}`).join(" ")
          const outcome = yield* Effect.promise(() =>
            client.callTool({ name: "send_message", arguments: { message: long, conversation_id } }, undefined, {
              // The client closes its transport: the call's HTTP response is dropped.
              onprogress: () => void client.close()
            }).then(() => "answered", () => "dropped")
          )
          expect(outcome).toBe("dropped")
          let open = yield* openStreams
          for (let i = 0; i < 50 && open > before; i++) {
            yield* Effect.sleep("20 millis")
            open = yield* openStreams
          }
          expect(open).toBe(before)
          // Let go while the reply still streams: the server stopped following, the turn did not stop.
          const during = yield* historyOf(team.tokens.member, deployment, conversation_id)
          expect(during.at(-1)).toMatch(/^assistant:.*:streaming$/)
          let history: Array<string> = []
          for (let i = 0; i < 300 && history.at(-1) !== `assistant:${long}:complete`; i++) {
            yield* Effect.sleep("20 millis")
            history = yield* historyOf(team.tokens.member, deployment, conversation_id)
          }
          expect(history).toEqual([`user:${long}:complete`, `assistant:${long}:complete`])
        }))

      it.scoped("a call holds one of the caller's streams while it lasts: beyond the most, 429 too_many_streams; given back when it ends", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const client = yield* connected(url, team.tokens.member)
          const long = Array.from({ length: 40 }, (_, i) => `y${i}`).join(" ")
          const toolsList = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })
          const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }
          const post = raw("POST", `/deployments/${deployment}/mcp`, { token: team.tokens.member, text: toolsList, headers })
          let streaming = 0
          let all!: () => void
          const started = new Promise<void>((resolve) => (all = resolve))
          const calls = Array.from({ length: maxStreamsPerUser }, () => {
            let counted = false
            return client.callTool({ name: "send_message", arguments: { message: long } }, undefined, {
              onprogress: () => {
                if (!counted && ++streaming === maxStreamsPerUser) all()
                counted = true
              }
            }).then((result) => result as ToolResult, (e) => ({ isError: true, content: [{ type: "text", text: String(e) }] }) as ToolResult)
          })
          yield* Effect.promise(() => started)
          const refused = yield* post
          const results = yield* Effect.promise(() => Promise.all(calls))
          expect(results.map((r) => r.structuredContent?.["reply"])).toEqual(results.map(() => long))
          expect(refused.status).toBe(429)
          expect(refused.body.error).toBe("too_many_streams")
          expect((yield* post).status).toBe(200)
        }))

      it.scoped("a refused send is a tool error and stores nothing: another user's conversation, the message limit", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const member = yield* connected(url, team.tokens.member)
          const call = (client: Client, args: Record<string, unknown>) =>
            Effect.promise(() => client.callTool({ name: "send_message", arguments: args }) as Promise<ToolResult>)
          const started = yield* call(member, { message: "mine" })
          const conversation = started.structuredContent?.["conversation_id"] as string
          // Another member of the account cannot continue it: it does not exist for them.
          const admin = yield* connected(url, team.tokens.admin)
          const refused = yield* call(admin, { message: "mine now", conversation_id: conversation })
          expect(refused.isError).toBe(true)
          expect(textOf(refused)).toContain("does not exist")
          expect(yield* historyOf(team.tokens.member, deployment, conversation)).toHaveLength(2)
          // The message limit holds: the third message of a conversation is refused, the conversation unchanged.
          yield* call(member, { message: "second", conversation_id: conversation })
          const limited = yield* call(member, { message: "third", conversation_id: conversation })
          expect(limited.isError).toBe(true)
          expect(textOf(limited)).toContain(`limit of ${messageLimit} messages`)
          expect(yield* historyOf(team.tokens.member, deployment, conversation)).toHaveLength(4)
        }))

      it.scoped("bad input answers the protocol's errors and stores nothing: malformed JSON, an unknown method, wrong params, an unknown tool", () =>
        Effect.gen(function*() {
          const { deployment, team, url } = yield* deployed
          const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" }
          const post = (text: string) => raw("POST", `/deployments/${deployment}/mcp`, { token: team.tokens.member, text, headers })
          const malformed = yield* post("{\"jsonrpc\": \"2.0\", ")
          expect(malformed.status).toBe(400)
          expect(malformed.body.error.code).toBe(-32700)
          const notRpc = yield* post(JSON.stringify({ hello: "world" }))
          expect(notRpc.status).toBe(400)
          expect(notRpc.body.error.code).toBeLessThan(0)
          const client = yield* connected(url, team.tokens.member)
          const unknown = yield* failureOf(client.request({ method: "dance/now", params: {} }, {} as any))
          expect(unknown.code).toBe(-32601)
          const call = (args: Record<string, unknown>, tool = "send_message") => failureOf(client.callTool({ name: tool, arguments: args }))
          expect((yield* call({})).code).toBe(-32602)
          expect((yield* call({ message: 5 })).code).toBe(-32602)
          const notUuid = yield* call({ message: "hi", conversation_id: "not-a-uuid" })
          expect(notUuid.code).toBe(-32602)
          expect((yield* call({ message: "hi", extra: true })).code).toBe(-32602)
          // A NUL, which no storage could keep, is refused naming the argument (as the send route refuses it).
          const nul = yield* call({ message: "a\u0000b" })
          expect([nul.code, nul.message.includes("message")]).toEqual([-32602, true])
          expect((yield* call({ message: "hi" }, "dance")).code).toBe(-32602)
          const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
          expect(list.status).toBe(200)
          expect(list.body.conversations).toEqual([])
        }))

      it.scoped("the servers are stateless: a GET (a session's stream) is 405 with Allow: POST", () =>
        Effect.gen(function*() {
          const { deployment, team } = yield* deployed
          for (const path of [`/deployments/${deployment}/mcp`, "/mcp"]) {
            const answer = yield* raw("GET", path, { token: team.tokens.member, headers: { accept: "text/event-stream" } })
            expect(answer.status).toBe(405)
            expect(answer.headers["allow"]).toBe("POST")
            expect(answer.body.error).toBe("method_not_allowed")
          }
          expect((yield* raw("GET", `/deployments/${deployment}/mcp`, { token: team.tokens.outsider })).status).toBe(404)
        }))

      it.scoped("the catalog's server lists the caller's live deployments as resources; reading one gives its record and its MCP and A2A URLs", () =>
        Effect.gen(function*() {
          const { base, deployment, team, url } = yield* deployed
          const member = yield* connected(`${base}/mcp`, team.tokens.member)
          const { resources } = yield* Effect.promise(() => member.listResources())
          const uri = `${base}/deployments/${deployment}`
          expect(resources.map((r) => r.uri)).toContain(uri)
          expect(resources.find((r) => r.uri === uri)).toMatchObject({ name: deployment, mimeType: "application/json" })
          const read = yield* Effect.promise(() => member.readResource({ uri }))
          const document = JSON.parse((read.contents[0] as { text: string }).text)
          expect(document).toMatchObject({
            deployment: { id: deployment, agent: `${team.account}/helper`, build_id: "b-1" },
            mcp_url: url,
            agent_card_url: `${base}/deployments/${deployment}/a2a/.well-known/agent-card.json`
          })
          const { resourceTemplates } = yield* Effect.promise(() => member.listResourceTemplates())
          expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([`${base}/deployments/{deploymentId}`])
          // Another account's member sees none of it, and cannot read it.
          const outsider = yield* connected(`${base}/mcp`, team.tokens.outsider)
          expect((yield* Effect.promise(() => outsider.listResources())).resources.map((r) => r.uri)).not.toContain(uri)
          expect((yield* failureOf(outsider.readResource({ uri }))).code).toBe(-32002)
          expect((yield* failureOf(member.readResource({ uri: "https://elsewhere.example/x" }))).code).toBe(-32002)
          // A page goes on from a deployment id: a cursor that is none is a wrong param.
          expect((yield* failureOf(member.listResources({ cursor: "../../x" }))).code).toBe(-32602)
          // An ended deployment is not listed any more.
          expect((yield* raw("DELETE", `/deployments/${deployment}`, { token: team.tokens.owner })).status).toBe(200)
          expect((yield* Effect.promise(() => member.listResources())).resources.map((r) => r.uri)).not.toContain(uri)
        }))
    })
  })
