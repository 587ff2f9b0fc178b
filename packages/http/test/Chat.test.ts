/**
 * The chat routes over HTTP, with the echo agent: each test names the rule of
 * interface.md (send-message rules 1-7, title, list) or extensions.md (reply
 * stream, history) it checks.
 */
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Conversation, Deployment, File, Ids, Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { DateTime, Effect, Option } from "effect"
import { conversationPath, deployedAgent, newConversationId, replies, send, settledHistory } from "./ChatHelpers.js"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

const messageLimit = 5

const addFile = (deployment: string, owner: Ids.UserId, key: string, status: "pending" | "ready", filename = `${key}.txt`) =>
  Effect.flatMap(Ports.FileStore, (files) =>
    files.upsert(new File.FileRecord({
      key,
      deployment_id: Deployment.DeploymentId.make(deployment),
      owner_id: owner,
      filename,
      content_type: "text/plain",
      size: 5,
      status,
      origin: "user",
      conversation_id: Option.none(),
      created_at: DateTime.unsafeMake("2026-11-01T00:00:00Z")
    })))

describe("HTTP: chat", () => {
  // The live clock: replies stream in real time.
  withLayer(layer({ messageLimit, echo: { delay: "2 millis" } }), { excludeTestServices: true })((it) => {
    it.effect("rule 1: a message needs content or at least one attachment (400)", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        for (const body of [{}, { content: "" }, { content: "   " }, { content: "", attachments: [] }]) {
          const r = yield* send(team.tokens.member, deployment, newConversationId(), body)
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_request")
        }
        const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(list.body).toEqual({ conversations: [] })
      }))

    it.effect("the conversation id must be a UUID v4 chosen by the client (400 otherwise)", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        for (const id of ["not-a-uuid", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "00000000-0000-0000-0000-000000000000"]) {
          const r = yield* send(team.tokens.member, deployment, id, { content: "hi" })
          expect(r.status).toBe(400)
          expect(r.body.details).toContain("UUID v4")
        }
      }))

    it.effect("rule 3: more than 16 files on one message is 413 too_many_attachments, and nothing is stored", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const attachments = Array.from({ length: 17 }, (_, i) => ({ key: `k-${i}` }))
        const r = yield* send(team.tokens.member, deployment, newConversationId(), { content: "files", attachments })
        expect(r.status).toBe(413)
        expectErrorBody(r.body, "too_many_attachments")
        const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(list.body.conversations).toEqual([])
      }))

    it.effect("rules 2 and 4: each attachment must be a ready file of the caller; its metadata comes from the file store", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const me = team.principals.member.user.id
        yield* addFile(deployment, me, "mine", "ready", "report.pdf")
        yield* addFile(deployment, me, "half", "pending")
        yield* addFile(deployment, team.principals.owner.user.id, "theirs", "ready")
        for (const key of ["missing", "half", "theirs"]) {
          const r = yield* send(team.tokens.member, deployment, newConversationId(), { content: "see file", attachments: [{ key }] })
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_attachment")
          expect(r.body.details).toContain(key)
        }
        const conversation = newConversationId()
        const ok = yield* send(team.tokens.member, deployment, conversation, { attachments: [{ key: "mine" }] })
        expect(ok.status).toBe(200)
        const history = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(history[0]).toMatchObject({ role: "user", content: "", attachments: [{ key: "mine", filename: "report.pdf" }] })
        const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(list.body.conversations[0].title).toBe("report.pdf")
      }))

    it.effect("rule 5: the answer comes at once with message_id and timestamp; the reply streams separately and is stored", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const text = "hello there agent, please echo this sentence back to me"
        const stream = yield* replies(team.tokens.member, deployment, conversation).pipe(Effect.flatMap((s) => Effect.succeed(s)))
        expect(stream.status).toBe(404)
        const r = yield* send(team.tokens.member, deployment, conversation, { content: text })
        expect(r.status).toBe(200)
        expect(Object.keys(r.body).sort()).toEqual(["message_id", "timestamp"])
        expect(Date.parse(r.body.timestamp)).not.toBeNaN()
        const live = yield* replies(team.tokens.member, deployment, conversation)
        const events: Array<any> = []
        while (!events.some((e) => e.event === "message.completed")) events.push(...(yield* Effect.promise(() => live.next(1))))
        live.close()
        const deltas = events.filter((e) => e.event === "message.delta")
        expect(deltas.length).toBeGreaterThan(0)
        expect(deltas.map((e) => e.data.delta).join("")).toBe(text)
        for (const d of deltas) expect(text.slice(d.data.index, d.data.index + d.data.delta.length)).toBe(d.data.delta)
        const completed = events.find((e) => e.event === "message.completed")
        expect(completed.data.content).toBe(text)
        expect(completed.id).toMatch(/:end$/)
        const history = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(history.map((m) => [m.role, m.content, m.status])).toEqual([["user", text, "complete"], ["assistant", text, "complete"]])
        expect(history[0].message_id).toBe(r.body.message_id)
      }))

    it.effect("rule 6: a conversation owned by another user is 404 for send, title, history, stream and cancel", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        expect((yield* send(team.tokens.member, deployment, conversation, { content: "mine" })).status).toBe(200)
        const path = conversationPath(deployment, conversation)
        const other = team.tokens.admin
        expect((yield* send(other, deployment, conversation, { content: "yours?" })).status).toBe(404)
        expect((yield* raw("PUT", `/deployments/${deployment}/chat/conversations/${conversation}/title`, { token: other, json: { title: "x" } })).status).toBe(404)
        expect((yield* raw("GET", `${path}/messages`, { token: other })).status).toBe(404)
        expect((yield* raw("POST", `${path}/cancel`, { token: other })).status).toBe(404)
        expect((yield* replies(other, deployment, conversation)).status).toBe(404)
        const theirs = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: other })
        expect(theirs.body.conversations).toEqual([])
      }))

    it.effect("rule 7: at the per-thread limit, sends answer 409 with error and code message_limit_reached, and stay refused", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        for (let i = 0; i < messageLimit; i++) {
          expect((yield* send(team.tokens.member, deployment, conversation, { content: `message ${i}` })).status).toBe(200)
        }
        for (let i = 0; i < 2; i++) {
          const refused = yield* send(team.tokens.member, deployment, conversation, { content: "one more" })
          expect(refused.status).toBe(409)
          expect(refused.body).toMatchObject({ error: "message_limit_reached", code: "message_limit_reached" })
          expect(refused.body.details).toContain("new conversation")
        }
        expect((yield* send(team.tokens.member, deployment, newConversationId(), { content: "fresh start" })).status).toBe(200)
      }))

    it.effect("50 simultaneous sends never store more user messages than the limit, nor create two conversations", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const results = yield* Effect.all(
          Array.from({ length: 50 }, (_, i) => send(team.tokens.member, deployment, conversation, { content: `burst ${i}` })),
          { concurrency: "unbounded" }
        )
        const statuses = results.map((r) => r.status)
        expect(statuses.filter((s) => s === 200).length).toBe(messageLimit)
        expect(statuses.filter((s) => s === 409).length).toBe(50 - messageLimit)
        const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(list.body.conversations.map((c: any) => c.conversation_id)).toEqual([conversation])
        const history = yield* raw("GET", `${conversationPath(deployment, conversation)}/messages`, { token: team.tokens.member })
        expect(history.body.messages.filter((m: any) => m.role === "user").length).toBe(messageLimit)
      }))

    it.effect("only members of the deployment's account may chat (403); an unknown deployment is 404", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const refused = yield* send(team.tokens.outsider, deployment, newConversationId(), { content: "hi" })
        expect(refused.status).toBe(403)
        expectErrorBody(refused.body, "forbidden")
        expect((yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.outsider })).status).toBe(403)
        expect((yield* send(team.tokens.member, "dep-unknown", newConversationId(), { content: "hi" })).status).toBe(404)
        expect((yield* raw("GET", `/deployments/${deployment}/chat/conversations`)).status).toBe(401)
      }))

    it.effect("title: 1 to 80 user-perceived characters, idempotent, never creates a conversation, 404 when not the caller's", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const titlePath = `/deployments/${deployment}/chat/conversations/${conversation}/title`
        const before = yield* raw("PUT", titlePath, { token: team.tokens.member, json: { title: "Early" } })
        expect(before.status).toBe(404)
        expect((yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })).body.conversations).toEqual([])
        yield* send(team.tokens.member, deployment, conversation, { content: "x".repeat(100) })
        const first = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(first.body.conversations[0].title).toBe("x".repeat(80))
        for (let i = 0; i < 2; i++) {
          const r = yield* raw("PUT", titlePath, { token: team.tokens.member, json: { title: "Trip plans" } })
          expect(r.status).toBe(200)
          expect(r.body).toEqual({ conversation_id: conversation, title: "Trip plans" })
        }
        const thumbs = "👍🏽".repeat(80)
        expect(Conversation.graphemeLength(thumbs)).toBe(80)
        expect(thumbs.length).toBe(320)
        expect((yield* raw("PUT", titlePath, { token: team.tokens.member, json: { title: thumbs } })).status).toBe(200)
        for (const title of ["", "   ", "a".repeat(81), `${thumbs}👍`]) {
          const r = yield* raw("PUT", titlePath, { token: team.tokens.member, json: { title } })
          expect(r.status).toBe(400)
        }
        const history = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(history.length).toBe(2)
      }))

    it.effect("the list shows the caller's conversations most recent first, with assistant_streaming while a reply streams", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const older = newConversationId()
        const newer = newConversationId()
        yield* send(team.tokens.member, deployment, older, { content: "first" })
        yield* settledHistory(team.tokens.member, deployment, older)
        yield* send(team.tokens.member, deployment, newer, { content: Array.from({ length: 400 }, (_, i) => `w${i}`).join(" ") })
        const during = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(during.body.conversations.map((c: any) => [c.conversation_id, c.assistant_streaming])).toEqual([[newer, true], [older, false]])
        yield* settledHistory(team.tokens.member, deployment, newer)
        const after = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
        expect(after.body.conversations.map((c: any) => c.assistant_streaming)).toEqual([false, false])
      }))

    it.effect("the reply stream resumes after Last-Event-ID: a client that drops mid-reply misses no chunk", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(" ")
        const first = yield* replies(team.tokens.member, deployment, conversation)
        expect(first.status).toBe(404)
        yield* send(team.tokens.member, deployment, conversation, { content: "warm up" })
        yield* settledHistory(team.tokens.member, deployment, conversation)
        const stream = yield* replies(team.tokens.member, deployment, conversation)
        yield* Effect.promise(() => stream.next(2))
        yield* send(team.tokens.member, deployment, conversation, { content: text })
        const got = yield* Effect.promise(() => stream.next(3))
        stream.close()
        const last = got.at(-1)!
        expect(last.event).toBe("message.delta")
        const resumed = yield* replies(team.tokens.member, deployment, conversation, { "last-event-id": last.id! })
        const rest: Array<any> = []
        while (!rest.some((e) => e.event === "message.completed")) rest.push(...(yield* Effect.promise(() => resumed.next(1))))
        resumed.close()
        const all = [...got, ...rest].filter((e) => e.event === "message.delta")
        expect(all.map((e) => e.data.delta).join("")).toBe(text)
        let expected = 0
        for (const d of all) {
          expect(d.data.index).toBe(expected)
          expected += d.data.delta.length
        }
      }))

    it.effect("opened after the reply finished, the stream replays the latest reply and its message.completed", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        yield* send(team.tokens.member, deployment, conversation, { content: "an earlier question" })
        yield* settledHistory(team.tokens.member, deployment, conversation)
        yield* send(team.tokens.member, deployment, conversation, { content: "the latest question" })
        yield* settledHistory(team.tokens.member, deployment, conversation)
        const late = yield* replies(team.tokens.member, deployment, conversation)
        const events = yield* Effect.promise(() => late.next(2))
        late.close()
        expect(events.map((e) => e.event)).toEqual(["message.delta", "message.completed"])
        expect(events[0]!.data).toMatchObject({ index: 0, delta: "the latest question" })
        expect(events[1]!.data.content).toBe("the latest question")
        const afterEnd = yield* replies(team.tokens.member, deployment, conversation, { "last-event-id": events[1]!.id! })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
        expect(afterEnd.pending()).toEqual([])
        afterEnd.close()
      }))

    it.effect("cancel stops the reply in flight; it is stored as cancelled with what arrived", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const path = conversationPath(deployment, conversation)
        yield* send(team.tokens.member, deployment, conversation, { content: Array.from({ length: 2000 }, (_, i) => `w${i}`).join(" ") })
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
        const cancelled = yield* raw("POST", `${path}/cancel`, { token: team.tokens.member })
        expect(cancelled.status).toBe(200)
        expect(cancelled.body.status).toBe("cancelled")
        const history = yield* settledHistory(team.tokens.member, deployment, conversation)
        const reply = history.at(-1)
        expect(reply.status).toBe("cancelled")
        expect(reply.content.length).toBeGreaterThan(0)
        expect(reply.content.length).toBeLessThan(10_000)
        const idle = yield* raw("POST", `${path}/cancel`, { token: team.tokens.member })
        expect(idle.body).toEqual({ status: "idle", message_id: null })
      }))

    it.effect("client_message_id makes a retried send idempotent: the same answer, no second message", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const conversation = newConversationId()
        const first = yield* send(team.tokens.member, deployment, conversation, { content: "once", client_message_id: "c-1" })
        const retry = yield* send(team.tokens.member, deployment, conversation, { content: "once", client_message_id: "c-1" })
        expect(retry.status).toBe(200)
        expect(retry.body).toEqual(first.body)
        const history = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(history.filter((m) => m.role === "user").length).toBe(1)
      }))
  })
})
