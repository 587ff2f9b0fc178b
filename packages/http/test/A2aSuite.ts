/**
 * Every deployment as an A2A agent (issue 29), driven by the official
 * `@a2a-js/sdk` client over HTTP: the agent card, SendMessage,
 * SendStreamingMessage, GetTask and CancelTask, with the conversation rules
 * (the context is the caller's conversation) and the protocol's errors.
 */
import { type Message, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk"
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client"
import { describe, expect, layer as withLayer } from "@effect/vitest"
import { Ports } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Effect, type Layer, Option } from "effect"
import { layer, port, raw } from "./HttpTestServer.js"

/** A fetch that carries a bearer token (the card says the agent wants one). */
const fetchAs = (token: string): typeof fetch => (input, init) => {
  const headers = new Headers(init?.headers)
  headers.set("authorization", `Bearer ${token}`)
  return fetch(input, { ...init, headers })
}

const clientFor = (base: string, deployment: string, token: string) => {
  const fetchImpl = fetchAs(token)
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl })
  }))
  return Effect.promise(() => factory.createFromUrl(`${base}/api/v1/deployments/${deployment}/a2a/.well-known/agent-card.json`, ""))
}

const userMessage = (text: string, contextId?: string): Message => ({
  messageId: globalThis.crypto.randomUUID(),
  contextId: contextId ?? "",
  taskId: "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "text/plain" }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const request = (message: Message) => ({
  tenant: "",
  message,
  configuration: { acceptedOutputModes: ["text/plain"], taskPushNotificationConfig: undefined, returnImmediately: false },
  metadata: undefined
})

/** The text of a task's artifacts, parts joined. */
const artifactText = (artifacts: ReadonlyArray<{ readonly parts: ReadonlyArray<{ readonly content?: { $case: string; value: unknown } | undefined }> }>) =>
  artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === "text" ? String(p.content.value) : "")).join("")

/** A team with a running deployment of an agent whose spec has a name, a description and a skill. */
const deployed = Effect.gen(function*() {
  const team = yield* Seed.team
  const spec = "name: helper\ndescription: Answers questions\nskills:\n  - id: answer\n    name: Answer\n    description: Answers one question\n    tags: [qa]\n"
  const registered = yield* raw("POST", `/agents/${team.account}/helper/register`, {
    token: team.tokens.owner,
    json: { build_id: "b-1", registry: "ghcr.io/acme", spec_content: spec }
  })
  expect(registered.status).toBe(201)
  const made = yield* raw("POST", `/agents/${team.account}/helper/deployments`, { token: team.tokens.owner, json: { build_id: "b-1" } })
  expect(made.status).toBe(201)
  return { team, deployment: made.body.id as string, base: `http://127.0.0.1:${yield* port}` }
})

/** The suite on the given storage (in memory without one). */
export const run = (name: string, storage?: Layer.Layer<Ports.StoragePorts>) =>
  describe(`HTTP on ${name} storage: every deployment is an A2A agent (issue 29)`, () => {
    // Real time: the echo agent sleeps between chunks.
    withLayer(
      layer({ echo: { delay: "30 millis" }, ...(storage === undefined ? {} : { storageLayer: storage }) }),
      { excludeTestServices: true }
    )((it) => {
      it.effect("the agent card names the agent from its spec, its skills, streaming, the JSON-RPC interface and the bearer scheme; members only", () =>
        Effect.gen(function*() {
          const { base, deployment, team } = yield* deployed
          const card = yield* raw("GET", `/deployments/${deployment}/a2a/.well-known/agent-card.json`, { token: team.tokens.member })
          expect(card.status).toBe(200)
          expect(card.body).toMatchObject({
            name: "helper",
            description: "Answers questions",
            supportedInterfaces: [{ url: `${base}/api/v1/deployments/${deployment}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
            capabilities: { streaming: true },
            skills: [{ id: "answer", name: "Answer", description: "Answers one question", tags: ["qa"] }]
          })
          expect(JSON.stringify(card.body.securitySchemes)).toContain("bearer")
          expect((yield* raw("GET", `/deployments/${deployment}/a2a/.well-known/agent-card.json`)).status).toBe(401)
          expect((yield* raw("GET", `/deployments/${deployment}/a2a/.well-known/agent-card.json`, { token: team.tokens.outsider })).status).toBe(404)
        }))

      it.effect("SendMessage runs a turn of the caller's conversation (the context) and answers the completed task with the reply", () =>
        Effect.gen(function*() {
          const { base, deployment, team } = yield* deployed
          const client = yield* clientFor(base, deployment, team.tokens.member)
          const result = yield* Effect.promise(() => client.sendMessage(request(userMessage("hello there agent"))))
          expect("id" in result && "status" in result).toBe(true)
          const task = result as Extract<typeof result, { status: unknown }>
          expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
          expect(artifactText(task.artifacts)).toBe("hello there agent")
          // The context is a conversation of the caller, stored as any other.
          const history = yield* raw("GET", `/deployments/${deployment}/messaging/conversations/${task.contextId}/messages`, {
            token: team.tokens.member
          })
          expect(history.body.messages.map((m: any) => `${m.role}:${m.content}:${m.status}`)).toEqual([
            "user:hello there agent:complete",
            "assistant:hello there agent:complete"
          ])
          // A second message in the same context is the next turn; GetTask gives the first task back.
          const again = yield* Effect.promise(() => client.sendMessage(request(userMessage("and again", task.contextId))))
          expect(artifactText((again as typeof task).artifacts)).toBe("and again")
          const got = yield* Effect.promise(() => client.getTask({ tenant: "", id: task.id, historyLength: undefined }))
          expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
          // Another user of the account neither continues the conversation nor reads the task.
          const other = yield* clientFor(base, deployment, team.tokens.admin)
          const refused = (yield* Effect.promise(() => other.sendMessage(request(userMessage("mine now", task.contextId))))) as typeof task
          expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED)
          expect(JSON.stringify(refused.status?.message?.parts)).toContain("does not exist")
          expect((yield* raw("GET", `/deployments/${deployment}/messaging/conversations/${task.contextId}/messages`, { token: team.tokens.member }))
            .body.messages).toHaveLength(4)
          const hidden = yield* Effect.promise(() => other.getTask({ tenant: "", id: task.id, historyLength: undefined }).then(() => "read", (e) => String(e)))
          expect(hidden).not.toBe("read")
        }))

      it.effect("the conversation rules over A2A: a url part attaches a file of the caller's by key or by its address, an unknown one is refused; a message sent again with its id is one turn", () =>
        Effect.gen(function*() {
          const { base, deployment, team } = yield* deployed
          const client = yield* clientFor(base, deployment, team.tokens.member)
          const upload = (filename: string) =>
            Effect.gen(function*() {
              const data = new TextEncoder().encode("some notes")
              const reserved = yield* raw("POST", `/deployments/${deployment}/files`, {
                token: team.tokens.member,
                json: { filename, content_type: "text/plain", size: data.length }
              })
              expect(reserved.status).toBe(201)
              const key = reserved.body.key as string
              const path = `/deployments/${deployment}/files/${encodeURIComponent(key)}`
              expect((yield* raw("PUT", `${path}/content`, { token: team.tokens.member, bytes: data })).status).toBe(200)
              expect((yield* raw("POST", `${path}/complete`, { token: team.tokens.member })).status).toBe(200)
              return key
            })
          const byKey = yield* upload("notes.txt")
          const byAddress = yield* upload("more.txt")
          const urlPart = (value: string) => ({ content: { $case: "url" as const, value }, metadata: undefined, filename: "", mediaType: "text/plain" })
          const message = userMessage("read these")
          message.parts.push(urlPart(byKey), urlPart(`${base}/api/v1/deployments/${deployment}/files/${encodeURIComponent(byAddress)}/content`))
          const task = (yield* Effect.promise(() => client.sendMessage(request(message)))) as Task
          expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
          const historyOf = (context: string) =>
            Effect.map(
              raw("GET", `/deployments/${deployment}/messaging/conversations/${context}/messages`, { token: team.tokens.member }),
              (answer) => answer.body.messages as Array<{ role: string; attachments: Array<{ key: string }> }>
            )
          const first = yield* historyOf(task.contextId)
          expect(first).toHaveLength(2)
          expect(first[0]!.attachments.map((a) => a.key)).toEqual([byKey, byAddress])
          // The same message again (its messageId unchanged), as a client retrying would: still one turn.
          yield* Effect.promise(() => client.sendMessage(request({ ...message, contextId: task.contextId })))
          expect(yield* historyOf(task.contextId)).toHaveLength(2)
          // A file that is not the caller's: refused as our send route refuses it, nothing stored.
          const unknown = userMessage("and this", task.contextId)
          unknown.parts.push(urlPart("no-such-file"))
          const refused = (yield* Effect.promise(() => client.sendMessage(request(unknown)))) as Task
          expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED)
          expect(yield* historyOf(task.contextId)).toHaveLength(2)
        }))

      it.effect("SendStreamingMessage streams the reply as artifact updates and ends completed; CancelTask stops a reply, stored cancelled", () =>
        Effect.gen(function*() {
          const { base, deployment, team } = yield* deployed
          const client = yield* clientFor(base, deployment, team.tokens.member)
          const events: Array<StreamResponse> = []
          yield* Effect.promise(async () => {
            for await (const event of client.sendMessageStream(request(userMessage("one two three four")))) events.push(event)
          })
          const kinds = events.map((e) => e.payload?.$case)
          expect(kinds[0]).toBe("task")
          expect(kinds.filter((k) => k === "artifactUpdate").length).toBeGreaterThanOrEqual(2)
          const last = events.at(-1)!
          expect(last.payload?.$case).toBe("statusUpdate")
          expect((last.payload as any).value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
          const streamed = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value.artifact!] : []))
          expect(artifactText(streamed)).toBe("one two three four")

          // A long reply, cancelled once it has started.
          const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ")
          const cancelled = yield* Effect.promise(async () => {
            const seen: Array<StreamResponse> = []
            for await (const event of client.sendMessageStream(request(userMessage(words)))) {
              seen.push(event)
              if (event.payload?.$case === "artifactUpdate" && seen.filter((e) => e.payload?.$case === "artifactUpdate").length === 2) {
                const taskId = event.payload.value.taskId
                await client.cancelTask({ tenant: "", id: taskId, metadata: undefined })
              }
            }
            return seen
          })
          const end = cancelled.at(-1)!
          expect((end.payload as any).value.status.state).toBe(TaskState.TASK_STATE_CANCELED)
          const contextId = (cancelled[0]!.payload as any).value.contextId as string
          const store = yield* Ports.ConversationStore
          const messages = yield* store.messages(contextId as never)
          expect(messages.map((m) => m.status)).toEqual(["complete", "cancelled"])
          expect(Option.isSome(Option.fromNullable(messages[1]))).toBe(true)
        }))

      it.effect("SubscribeToTask joins a running task: the rest of its reply, then completed; a task that does not exist is -32001", () =>
        Effect.gen(function*() {
          const { base, deployment, team } = yield* deployed
          const client = yield* clientFor(base, deployment, team.tokens.member)
          const words = Array.from({ length: 20 }, (_, i) => `r${i}`).join(" ")
          const joined = yield* Effect.promise(async () => {
            const stream = client.sendMessageStream(request(userMessage(words)))
            const first = await stream.next()
            const taskId = (first.value as StreamResponse).payload?.$case === "task" ? ((first.value as any).payload.value.id as string) : ""
            const seen: Array<StreamResponse> = []
            for await (const event of client.resubscribeTask({ tenant: "", id: taskId })) seen.push(event)
            for await (const _ of stream) void _
            return seen
          })
          const end = joined.at(-1)!
          expect(end.payload?.$case).toBe("statusUpdate")
          expect((end.payload as any).value.status.state).toBe(TaskState.TASK_STATE_COMPLETED)
          const rpc = (body: unknown) =>
            raw("POST", `/deployments/${deployment}/a2a`, { token: team.tokens.member, json: body, headers: { "a2a-version": "1.0" } })
          const missing = yield* rpc({ jsonrpc: "2.0", id: 9, method: "SubscribeToTask", params: { id: "no-such-task" } })
          const text = typeof missing.body === "string" ? missing.body : JSON.stringify(missing.body)
          expect(text).toContain("-32001")
        }))

      it.effect("tasks are kept by the storage (when it keeps them): a task is stored as it ends, and GetTask and ListTasks answer from the storage, as another process or a restarted one would", () =>
        Effect.gen(function*() {
          const durable = yield* Effect.serviceOption(Ports.A2aTaskStore)
          if (Option.isNone(durable)) return
          const store = durable.value
          const { base, deployment, team } = yield* deployed
          const client = yield* clientFor(base, deployment, team.tokens.member)
          const task = (yield* Effect.promise(() => client.sendMessage(request(userMessage("kept in storage"))))) as Task
          const owner = team.principals.member.user.id
          const stored = Option.getOrThrow(yield* store.find(deployment as never, owner, task.id))
          expect(stored.context_id).toBe(task.contextId)
          expect(JSON.parse(stored.task).status.state).toBe("TASK_STATE_COMPLETED")
          // A task this process never ran (another process's, or one from before a restart) is read from the storage.
          const elsewhere = { ...JSON.parse(stored.task), id: "task-of-another-process" }
          yield* store.save({ ...stored, task_id: elsewhere.id, task: JSON.stringify(elsewhere) })
          const got = yield* Effect.promise(() => client.getTask({ tenant: "", id: elsewhere.id, historyLength: undefined }))
          expect([got.id, got.status?.state, artifactText(got.artifacts)]).toEqual([elsewhere.id, TaskState.TASK_STATE_COMPLETED, "kept in storage"])
          const listed = yield* Effect.promise(() =>
            client.listTasks({ tenant: "", contextId: task.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: "", statusTimestampAfter: undefined, includeArtifacts: true } as never)
          )
          expect(listed.tasks.map((t) => t.id).sort()).toEqual([elsewhere.id, task.id].sort())
          // A page at a time: a full page gives the token of the next; the last page gives none.
          const page = (pageToken: string) =>
            Effect.promise(() =>
              client.listTasks(
                { tenant: "", contextId: task.contextId, status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 1, pageToken, statusTimestampAfter: undefined, includeArtifacts: false } as never
              )
            )
          const one = yield* page("")
          expect(one.tasks).toHaveLength(1)
          expect(one.nextPageToken).not.toBe("")
          const two = yield* page(one.nextPageToken)
          expect(two.tasks.map((t) => t.id)).toEqual([elsewhere.id, task.id].filter((id) => id !== one.tasks[0]!.id))
          const three = yield* page(two.nextPageToken)
          expect([three.tasks.length, three.nextPageToken]).toEqual([0, ""])
          // Another user of the account reads none of them.
          const other = yield* clientFor(base, deployment, team.tokens.admin)
          const hidden = yield* Effect.promise(() => other.getTask({ tenant: "", id: elsewhere.id, historyLength: undefined }).then(() => "read", () => "hidden"))
          expect(hidden).toBe("hidden")
        }))

      it.effect("version negotiation: a request for a protocol version the card does not offer is -32009 and runs nothing", () =>
        Effect.gen(function*() {
          const { deployment, team } = yield* deployed
          const message = { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }] }
          const old = yield* raw("POST", `/deployments/${deployment}/a2a`, {
            token: team.tokens.member,
            json: { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message } },
            headers: { "a2a-version": "0.3" }
          })
          expect(old.status).toBe(200)
          expect(old.body.error.code).toBe(-32009)
          const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
          expect(list.body.conversations).toEqual([])
        }))

      it.effect("bad input answers the protocol's JSON-RPC errors and stores nothing: malformed JSON, an unknown method, bad params, a context that is not a UUID", () =>
        Effect.gen(function*() {
          const { deployment, team } = yield* deployed
          const rpc = (text: string) =>
            raw("POST", `/deployments/${deployment}/a2a`, { token: team.tokens.member, text, headers: { "content-type": "application/json", "a2a-version": "1.0" } })
          const malformed = yield* rpc("{\"jsonrpc\": \"2.0\", ")
          expect(malformed.status).toBe(200)
          expect(malformed.body.error.code).toBe(-32700)
          const unknown = yield* rpc(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "DanceTask", params: {} }))
          expect(unknown.body.error.code).toBe(-32601)
          const badParams = yield* rpc(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "SendMessage", params: { message: 5 } }))
          expect(badParams.body.error.code).toBeLessThan(0)
          const notUuid = yield* rpc(JSON.stringify({
            jsonrpc: "2.0",
            id: 3,
            method: "SendMessage",
            params: { message: { messageId: "m-1", contextId: "not-a-uuid", role: "ROLE_USER", parts: [{ text: "hi" }] } }
          }))
          expect(notUuid.body.error.code).toBe(-32602)
          expect(notUuid.body.error.message).toContain("UUID")
          const list = yield* raw("GET", `/deployments/${deployment}/chat/conversations`, { token: team.tokens.member })
          expect(list.status).toBe(200)
          expect(list.body.conversations).toEqual([])
        }))
    })
  })
