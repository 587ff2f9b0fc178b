/**
 * The derived client against the real API on a loopback server: typed
 * answers, typed error bodies, base addresses, and file transfers with
 * progress.
 */
import { describe, expect, it as plain, layer as withLayer } from "@effect/vitest"
import { ClientError, FileTransfer, HostingClient } from "@hosting/client"
import { Ids } from "@hosting/core"
import { Seed } from "@hosting/testing"
import { Chunk, Effect, Stream } from "effect"
import { baseUrl, layer } from "./TestServer.js"

const client = (token?: string) =>
  Effect.flatMap(baseUrl, (base) => HostingClient.make(token === undefined ? { baseUrl: base } : { baseUrl: base, token }))

const spec = "name: helper\ndescription: Helps people\n"

describe("HostingClient", () => {
  describe("base addresses", () => {
    plain("are normalised to end in /api/v1 without a slash, and the derived client prefixes the origin", () => {
      expect(HostingClient.normalizeBaseUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080/api/v1")
      expect(HostingClient.normalizeBaseUrl("http://127.0.0.1:8080/api/v1/")).toBe("http://127.0.0.1:8080/api/v1")
      expect(HostingClient.normalizeBaseUrl("https://example.com/hosting/")).toBe("https://example.com/hosting/api/v1")
      expect(HostingClient.apiRoot("https://example.com/hosting/api/v1")).toBe("https://example.com/hosting")
      expect(() => HostingClient.normalizeBaseUrl("ftp://example.com")).toThrow()
    })

    plain("reads the file name of Content-Disposition, the UTF-8 one first", () => {
      expect(FileTransfer.filenameOf(`attachment; filename="r_sum_.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt`)).toBe("résumé.txt")
      expect(FileTransfer.filenameOf(`attachment; filename="notes.txt"`)).toBe("notes.txt")
      expect(FileTransfer.filenameOf(undefined)).toBeUndefined()
    })
  })

  withLayer(layer(), { excludeTestServices: true })((it) => {
    it.effect("registers, publishes and reads an agent with typed requests and answers", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const api = yield* client(team.tokens.owner)
        const path = { account: team.account, name: Ids.AgentName.make("helper") }
        const registered = yield* api.agents.register({
          path,
          payload: { build_id: Ids.BuildId.make("b-1"), registry: "ghcr.io/acme", spec_content: spec }
        })
        expect(registered).toMatchObject({ account: team.account, name: "helper", build_id: "b-1" })
        yield* api.agents.publish({ path, payload: { build_id: Ids.BuildId.make("b-1"), version: Ids.SemVer.make("1.0.0") } })
        const anonymous = yield* client()
        const agent = yield* anonymous.publicAgents.get({ path })
        expect(agent.versions.map((v) => v.version)).toEqual(["1.0.0"])
        const me = yield* api.accounts.me()
        expect(me.accounts.map((a) => a.name)).toContain(team.account)
      }))

    it.effect("error answers arrive as the API's error classes with { error, details }, and describe gives their status", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const path = { account: team.account, name: Ids.AgentName.make("nothing-here") }
        const missing = yield* Effect.flip((yield* client(team.tokens.owner)).publicAgents.get({ path }))
        expect(missing._tag).toBe("NotFound")
        expect(yield* ClientError.describe(missing)).toMatchObject({ kind: "response", status: 404, error: "agent_not_found" })

        const anonymous = yield* Effect.flip((yield* client()).accounts.me())
        expect(anonymous._tag).toBe("Unauthorized")
        const problem = yield* ClientError.describe(anonymous)
        expect(problem).toMatchObject({ kind: "response", status: 401, error: "unauthorized" })
        expect(problem.details.length).toBeGreaterThan(0)

        const forbidden = yield* Effect.flip((yield* client(team.tokens.member)).agents.register({
          path,
          payload: { build_id: Ids.BuildId.make("b-1"), registry: "ghcr.io/acme", spec_content: spec }
        }))
        expect(yield* ClientError.describe(forbidden)).toMatchObject({ status: 403, error: "forbidden" })
      }))

    it.effect("an unreachable server is a network problem", () =>
      Effect.gen(function*() {
        const api = yield* HostingClient.make({ baseUrl: "http://127.0.0.1:1/api/v1" })
        const error = yield* Effect.flip(api.publicAgents.list({ urlParams: { limit: 10, offset: 0 } }))
        expect(yield* ClientError.describe(error)).toMatchObject({ kind: "network", error: "network_error" })
      }))

    it.effect("uploads (reserve, PUT, complete) and downloads a file, reporting progress as bytes/total", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const base = yield* baseUrl
        const bytes = new Uint8Array(200_000).map((_, i) => i % 251)
        const sent: Array<FileTransfer.Progress> = []
        const uploaded = yield* FileTransfer.upload({
          baseUrl: base,
          token: team.tokens.member,
          deploymentId: deployment.id,
          filename: "data.bin",
          contentType: "application/octet-stream",
          size: bytes.length,
          content: Stream.fromIterable([bytes.slice(0, 70_000), bytes.slice(70_000)]),
          onProgress: (p) => Effect.sync(() => sent.push(p))
        })
        expect(uploaded).toMatchObject({ filename: "data.bin", size: 200_000, status: "ready" })
        expect(sent[0]).toEqual({ transferred: 0, total: 200_000 })
        expect(sent.at(-1)).toEqual({ transferred: 200_000, total: 200_000 })

        const received: Array<FileTransfer.Progress> = []
        const content = yield* Effect.scoped(Effect.gen(function*() {
          const download = yield* FileTransfer.download({
            baseUrl: base,
            token: team.tokens.member,
            deploymentId: deployment.id,
            fileKey: uploaded.key,
            onProgress: (p) => Effect.sync(() => received.push(p))
          })
          expect(download).toMatchObject({ filename: "data.bin", size: 200_000 })
          return yield* Stream.runCollect(download.stream)
        }))
        const joined = Chunk.toReadonlyArray(content).reduce((all, chunk) => Buffer.concat([all, chunk]), Buffer.alloc(0))
        expect(Buffer.compare(joined, Buffer.from(bytes))).toBe(0)
        expect(received.at(-1)).toEqual({ transferred: 200_000, total: 200_000 })

        // Another member's files are not theirs to read: 404, typed.
        const other = yield* Effect.flip(Effect.scoped(FileTransfer.download({
          baseUrl: base,
          token: team.tokens.owner,
          deploymentId: deployment.id,
          fileKey: uploaded.key
        })))
        expect(yield* ClientError.describe(other)).toMatchObject({ status: 404 })
      }))

    it.effect("an empty file uploads too", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const uploaded = yield* FileTransfer.upload({
          baseUrl: yield* baseUrl,
          token: team.tokens.member,
          deploymentId: deployment.id,
          filename: "empty.txt",
          contentType: "text/plain",
          size: 0,
          content: Stream.empty
        })
        expect(uploaded).toMatchObject({ size: 0, status: "ready" })
      }))

    it.effect("a client on another name of the server (localhost) uploads through the API's route the server names by its address", () =>
      Effect.gen(function*() {
        const team = yield* Seed.team
        const deployment = yield* Seed.deployment(team)
        const uploaded = yield* FileTransfer.upload({
          baseUrl: (yield* baseUrl).replace("127.0.0.1", "localhost"),
          token: team.tokens.member,
          deploymentId: deployment.id,
          filename: "named.txt",
          contentType: "text/plain",
          size: 5,
          content: Stream.make(new TextEncoder().encode("hello"))
        })
        expect(uploaded).toMatchObject({ size: 5, status: "ready" })
      }))
  })
})
