/**
 * The files routes over HTTP with an object store that cannot presign (so
 * uploads go through the API and downloads stream): each test names the rule
 * of interface.md or extensions.md it checks.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Conversation, Deployment, Files } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Duration, Effect, Stream, TestClock } from "effect"
import { deployedAgent, newConversationId, send, settledHistory, conversationPath } from "./ChatHelpers.js"
import { expectErrorBody, layer, raw } from "./HttpTestServer.js"

const encode = (text: string) => new TextEncoder().encode(text)

/** A raw call with a binary body or reading a binary answer. */
const bytes = (method: "GET" | "PUT", path: string, token: string, body?: Uint8Array, headers: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(`/api/v1${path}`).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.setHeaders(headers)
    )
    if (body) request = HttpClientRequest.bodyUint8Array(request, body, "application/octet-stream")
    const response = yield* http.execute(request)
    const data = new Uint8Array(yield* response.arrayBuffer)
    return { status: response.status, headers: response.headers, data, text: new TextDecoder().decode(data) }
  }).pipe(Effect.scoped, Effect.orDie)

const reserve = (team: Seed.Team, who: Seed.Person, deployment: string, body: Record<string, unknown>) =>
  raw("POST", `/deployments/${deployment}/files`, { token: team.tokens[who], json: body })

/** Reserves, uploads and completes a file; returns its key. */
const uploaded = (team: Seed.Team, who: Seed.Person, deployment: string, filename: string, content: string) =>
  Effect.gen(function*() {
    const data = new TextEncoder().encode(content)
    const r = yield* reserve(team, who, deployment, { filename, content_type: "text/plain; charset=utf-8", size: data.length })
    expect(r.status).toBe(201)
    expect((yield* bytes("PUT", `/deployments/${deployment}/files/${r.body.key}/content`, team.tokens[who], data)).status).toBe(200)
    expect((yield* raw("POST", `/deployments/${deployment}/files/${r.body.key}/complete`, { token: team.tokens[who] })).status).toBe(200)
    return r.body.key as string
  })

describe("HTTP: files", () => {
  it.layer(layer())((it) => {
    it.effect("reserve answers 201 with key, upload_url (a route of this API), expires_at and status pending", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const r = yield* reserve(team, "member", deployment, { filename: "notes.txt", content_type: "text/plain", size: 5 })
        expect(r.status).toBe(201)
        expect(r.body).toMatchObject({ filename: "notes.txt", content_type: "text/plain", size: 5, status: "pending", origin: "user" })
        expect(r.body.key).toMatch(Files.userKey)
        expect(r.body.upload_url).toMatch(new RegExp(`/api/v1/deployments/${deployment}/files/${r.body.key}/content$`))
        expect(Date.parse(r.body.expires_at)).toBeGreaterThan(Date.parse(r.body.created_at))
      }))

    it.effect("reserve refuses a path as filename, control characters, a bad size or content type (400); non-members 403", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const good = { filename: "a.txt", content_type: "text/plain", size: 1 }
        for (const bad of [
          { ...good, filename: "../etc/passwd" },
          { ...good, filename: "dir/a.txt" },
          { ...good, filename: "a\u0000b" },
          { ...good, filename: "line\nbreak" },
          { ...good, filename: "" },
          { ...good, size: -1 },
          { ...good, size: 1.5 },
          { ...good, size: 10 * 1024 * 1024 * 1024 },
          { ...good, content_type: "not a type" }
        ]) {
          const r = yield* reserve(team, "member", deployment, bad)
          expect(r.status).toBe(400)
          expectErrorBody(r.body, "invalid_request")
        }
        expect((yield* reserve(team, "outsider", deployment, good)).status).toBe(403)
        expect((yield* raw("POST", "/deployments/dep-nothing/files", { token: team.tokens.member, json: good })).status).toBe(404)
        expect((yield* raw("POST", `/deployments/${deployment}/files`, { json: good })).status).toBe(401)
      }))

    it.effect("upload stores at most the reserved size (413 beyond); complete needs every byte; then the file is ready and an upload is 409", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const r = yield* reserve(team, "member", deployment, { filename: "a.bin", content_type: "application/octet-stream", size: 4 })
        const path = `/deployments/${deployment}/files/${r.body.key}`
        const early = yield* raw("POST", `${path}/complete`, { token: team.tokens.member })
        expect(early.status).toBe(400)
        expectErrorBody(early.body, "upload_incomplete")
        const tooBig = yield* bytes("PUT", `${path}/content`, team.tokens.member, new Uint8Array([1, 2, 3, 4, 5]))
        expect(tooBig.status).toBe(413)
        expect(JSON.parse(tooBig.text)).toMatchObject({ error: "file_too_large" })
        const short = yield* bytes("PUT", `${path}/content`, team.tokens.member, new Uint8Array([1, 2]))
        expect(short.status).toBe(200)
        expect((yield* raw("POST", `${path}/complete`, { token: team.tokens.member })).body).toMatchObject({ error: "upload_incomplete" })
        expect((yield* bytes("PUT", `${path}/content`, team.tokens.admin, new Uint8Array([1, 2, 3, 4]))).status).toBe(404)
        expect((yield* bytes("PUT", `${path}/content`, team.tokens.member, new Uint8Array([1, 2, 3, 4]))).status).toBe(200)
        const done = yield* raw("POST", `${path}/complete`, { token: team.tokens.member })
        expect(done.body).toEqual({ key: r.body.key, status: "ready", size: 4 })
        expect((yield* raw("POST", `${path}/complete`, { token: team.tokens.member })).status).toBe(200)
        // A ready file's bytes never change: a late upload is 409, and the file keeps its bytes.
        const late = yield* bytes("PUT", `${path}/content`, team.tokens.member, new Uint8Array([9, 9, 9, 9]))
        expect(late.status).toBe(409)
        expect(JSON.parse(late.text)).toMatchObject({ error: "file_complete" })
        expect(JSON.parse(late.text).details).toContain("never change")
        expect(Array.from((yield* bytes("GET", `${path}/content`, team.tokens.member)).data)).toEqual([1, 2, 3, 4])
      }))

    it.effect("a missing, incomplete or someone else's file gives 404 on download, always", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const mine = yield* uploaded(team, "member", deployment, "mine.txt", "secret")
        const pending = yield* reserve(team, "member", deployment, { filename: "p.txt", content_type: "text/plain", size: 3 })
        for (const [who, key] of [["admin", mine], ["member", pending.body.key], ["member", `f-${globalThis.crypto.randomUUID()}`]] as const) {
          const r = yield* bytes("GET", `/deployments/${deployment}/files/${key}/content`, team.tokens[who])
          expect(r.status).toBe(404)
          expect(JSON.parse(r.text)).toMatchObject({ error: "file_not_found" })
        }
      }))

    it.effect("download streams the bytes with Content-Type, Content-Length and an RFC 6266 Content-Disposition", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const key = yield* uploaded(team, "member", deployment, "résumé \"final\".txt", "hello, world")
        const r = yield* bytes("GET", `/deployments/${deployment}/files/${key}/content`, team.tokens.member)
        expect(r.status).toBe(200)
        expect(r.text).toBe("hello, world")
        expect(r.headers["content-type"]).toBe("text/plain; charset=utf-8")
        expect(r.headers["content-length"]).toBe("12")
        expect(r.headers["accept-ranges"]).toBe("bytes")
        expect(r.headers["content-disposition"]).toBe(
          "attachment; filename=\"r_sum_ _final_.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.txt"
        )
      }))

    it.effect("download supports Range: 206 with Content-Range, suffix ranges, and 416 beyond the end", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const key = yield* uploaded(team, "member", deployment, "digits.txt", "0123456789")
        const path = `/deployments/${deployment}/files/${key}/content`
        const middle = yield* bytes("GET", path, team.tokens.member, undefined, { range: "bytes=2-5" })
        expect([middle.status, middle.text, middle.headers["content-range"], middle.headers["content-length"]]).toEqual([
          206,
          "2345",
          "bytes 2-5/10",
          "4"
        ])
        const tail = yield* bytes("GET", path, team.tokens.member, undefined, { range: "bytes=-3" })
        expect([tail.status, tail.text]).toEqual([206, "789"])
        const open = yield* bytes("GET", path, team.tokens.member, undefined, { range: "bytes=7-" })
        expect(open.text).toBe("789")
        const beyond = yield* bytes("GET", path, team.tokens.member, undefined, { range: "bytes=10-12" })
        expect([beyond.status, beyond.headers["content-range"]]).toEqual([416, "bytes */10"])
      }))

    it.effect("agent-produced files are addressed by name in the caller's space; a path, NUL or encoded slash is 400", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const files = yield* Files.Files
        yield* files.storeAgentFile({
          deployment_id: Deployment.DeploymentId.make(deployment),
          owner_id: team.principals.member.user.id,
          conversation_id: Conversation.ConversationId.make(newConversationId()),
          filename: "report.csv",
          content_type: "text/csv",
          body: Stream.make(new TextEncoder().encode("a,b\n1,2\n"))
        })
        const mine = yield* bytes("GET", `/deployments/${deployment}/files/report.csv/content`, team.tokens.member)
        expect([mine.status, mine.text, mine.headers["content-type"]]).toEqual([200, "a,b\n1,2\n", "text/csv"])
        expect((yield* bytes("GET", `/deployments/${deployment}/files/report.csv/content`, team.tokens.admin)).status).toBe(404)
        for (const name of ["..%2Freport.csv", "a%00b", "x%2Fy", "tab%09name"]) {
          const r = yield* bytes("GET", `/deployments/${deployment}/files/${name}/content`, team.tokens.member)
          expect(r.status).toBe(400)
        }
        const listed = yield* raw("GET", `/deployments/${deployment}/files`, { token: team.tokens.member })
        expect(listed.body.files.map((f: any) => [f.filename, f.origin, f.status])).toEqual([["report.csv", "agent", "ready"]])
        expect((yield* raw("GET", `/deployments/${deployment}/files`, { token: team.tokens.admin })).body.files).toEqual([])
      }))

    it.effect("a chat message attaches an uploaded file by key; the history shows it with its filename", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const key = yield* uploaded(team, "member", deployment, "plan.md", "# plan")
        const conversation = newConversationId()
        const r = yield* send(team.tokens.member, deployment, conversation, { content: "see attached", attachments: [{ key }] })
        expect(r.status).toBe(200)
        const history = yield* settledHistory(team.tokens.member, deployment, conversation)
        expect(history[0].attachments).toEqual([{ key, filename: "plan.md" }])
        expect(conversationPath(deployment, conversation)).toContain(conversation)
      }))

    // Last in the file: it moves the shared test clock 30 minutes on.
    it.effect("past expires_at an upload is 400 upload_expired; past the grace completing is too, and the file is no longer listed", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* deployedAgent(team)
        const late = yield* reserve(team, "member", deployment, { filename: "late.txt", content_type: "text/plain", size: 4 })
        const sent = yield* reserve(team, "member", deployment, { filename: "sent.txt", content_type: "text/plain", size: 4 })
        const sentPath = `/deployments/${deployment}/files/${sent.body.key}`
        expect((yield* bytes("PUT", `${sentPath}/content`, team.tokens.member, encode("sent"))).status).toBe(200)
        yield* TestClock.adjust(Duration.millis(Date.parse(late.body.expires_at) - Date.parse(late.body.created_at)))
        const refused = yield* bytes("PUT", `/deployments/${deployment}/files/${late.body.key}/content`, team.tokens.member, encode("late"))
        expect(refused.status).toBe(400)
        expectErrorBody(JSON.parse(refused.text), "upload_expired")
        expect((yield* raw("GET", `/deployments/${deployment}/files`, { token: team.tokens.member })).body.files.length).toBe(2)
        yield* TestClock.adjust("15 minutes")
        yield* TestClock.adjust("1 millis")
        const completed = yield* raw("POST", `${sentPath}/complete`, { token: team.tokens.member })
        expect(completed.status).toBe(400)
        expectErrorBody(completed.body, "upload_expired")
        expect((yield* raw("GET", `/deployments/${deployment}/files`, { token: team.tokens.member })).body).toEqual({ files: [] })
      }))
  })
})
