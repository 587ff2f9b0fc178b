/**
 * The whole API on a real loopback server (random port) over in-memory
 * services, with the fetch HttpClient that the client runs on in browsers,
 * plus a TCP proxy that can cut its connections the way a network does.
 */
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { NodeServer } from "@hosting/http-node"
import { ApiApp, HostingHttp } from "@hosting/http"
import { TestServices } from "@hosting/testing"
import { Effect, Layer } from "effect"
import { connect, createServer as createTcpServer, type Socket } from "node:net"

export const layer = (options: TestServices.TestServicesOptions = {}) =>
  ApiApp.serve().pipe(
    Layer.provide(HostingHttp.layer()),
    Layer.provideMerge(TestServices.make(options)),
    Layer.provideMerge(NodeServer.layer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(FetchHttpClient.layer)
  )

const portOf = HttpServer.addressWith((address) => Effect.succeed(address._tag === "TcpAddress" ? address.port : 0))

/** The base address of the test server. */
export const baseUrl = Effect.map(portOf, (port) => `http://127.0.0.1:${port}/api/v1`)

/** A raw JSON call, for setting up data without the client under test. */
export const call = (method: string, path: string, token: string, body?: unknown) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.promise(async () => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: response.status, body: (await response.json()) as any }
    }))

/** A loopback TCP proxy in front of the test server; `dropAll` cuts every open connection. */
export const proxy = Effect.acquireRelease(
  Effect.flatMap(portOf, (target) =>
    Effect.promise(async () => {
      const sockets = new Set<Socket>()
      let accepted = 0
      const server = createTcpServer((client) => {
        accepted += 1
        const upstream = connect(target, "127.0.0.1")
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on("close", () => sockets.delete(socket))
          socket.on("error", () => socket.destroy())
        }
        client.pipe(upstream).pipe(client)
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      return {
        baseUrl: `http://127.0.0.1:${port}/api/v1`,
        /** Connections accepted so far. */
        accepted: () => accepted,
        dropAll: () => sockets.forEach((socket) => socket.destroy()),
        close: () =>
          new Promise<void>((resolve) => {
            sockets.forEach((socket) => socket.destroy())
            server.close(() => resolve())
          })
      }
    })),
  (p) => Effect.promise(() => p.close())
)
