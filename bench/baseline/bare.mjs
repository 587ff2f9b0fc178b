#!/usr/bin/env node
// The bare baseline: node:http + better-sqlite3, answering the requests the
// workloads make with the same JSON shapes as the example server. It is the
// yardstick the runner divides by: what the simplest direct code gets from
// this machine in the same run.
//
// Environment: BASELINE_DB (SQLite file), BASELINE_SEED (JSON seed written by
// the runner), BASELINE_AGENT (echo | http | relay; see store.mjs),
// BASELINE_PUBLIC_URL (the base of the links it answers, as HOSTING_PUBLIC_URL),
// BASELINE_PORT (0), BASELINE_HOST (127.0.0.1), BASELINE_HEARTBEAT_MS
// (25000). Prints
// `listening on http://HOST:PORT/api/v1` when ready; stops on SIGTERM/SIGINT.
import { createReadStream, statSync } from "node:fs"
import { createServer } from "node:http"
import { pipeline } from "node:stream"
import { notFound, open, unauthorized } from "./store.mjs"

const env = process.env
const store = open({
  filename: env.BASELINE_DB,
  seedPath: env.BASELINE_SEED,
  agent: env.BASELINE_AGENT ?? "echo",
  publicUrl: env.BASELINE_PUBLIC_URL
})
const heartbeatMs = Number(env.BASELINE_HEARTBEAT_MS ?? 25_000)
const maxBody = 2 * 1024 * 1024

const sseHeaders = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
  connection: "keep-alive"
}

const send = (res, { status, body }) => {
  const text = typeof body === "string" ? body : JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const readJson = (req) =>
  new Promise((resolve) => {
    const chunks = []
    let size = 0
    req.on("data", (chunk) => {
      size += chunk.length
      if (size <= maxBody) chunks.push(chunk)
    })
    req.on("end", () => {
      if (size > maxBody) return resolve(undefined)
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}"))
      } catch {
        resolve(undefined)
      }
    })
    req.on("error", () => resolve(undefined))
  })

// Open event streams per account, and every open stream for the heartbeat.
const accountStreams = new Map()
const openStreams = new Set()

const openSse = (req, res, first) => {
  res.writeHead(200, sseHeaders)
  res.write(first)
  openStreams.add(res)
  req.on("close", () => openStreams.delete(res))
}

const heartbeat = setInterval(() => {
  for (const res of openStreams) res.write("event: heartbeat\ndata: {}\n\n")
}, heartbeatMs)
heartbeat.unref()

const routes = async (req, res, parts, user) => {
  const [a, b, c, d, e, f] = parts
  const method = req.method

  // GET /agents/{account}/{name}: public, the stored JSON as it is (every build for a member).
  if (method === "GET" && a === "agents" && parts.length === 3) {
    const json = store.agentJson(b, c, user)
    return send(res, json === undefined ? notFound(`agent ${b}/${c} does not exist`) : { status: 200, body: json })
  }

  if (user === undefined) return send(res, unauthorized)

  if (method === "GET" && a === "me" && parts.length === 1) return send(res, store.me(user))

  // GET /agents/{account}/{name}/deployment/history
  if (method === "GET" && a === "agents" && d === "deployment" && e === "history" && parts.length === 5) {
    return send(res, store.deploymentHistory(user, b, c))
  }

  // GET /deployments/{dep}/chat/conversations
  if (method === "GET" && a === "deployments" && c === "chat" && d === "conversations" && parts.length === 4) {
    return send(res, store.conversations(user, b))
  }

  // POST /agents/{account}/{name}/register: appends an agent.build event and wakes the account's streams.
  if (method === "POST" && a === "agents" && d === "register" && parts.length === 4) {
    const body = await readJson(req)
    if (!body?.build_id) return send(res, { status: 400, body: { error: "invalid_request", details: "build_id is required" } })
    if (!store.isMember(b, user)) return send(res, { status: 403, body: { error: "forbidden", details: "not a member" } })
    const data = { agent: `${b}/${c}`, build_id: body.build_id, status: "registered" }
    const id = store.appendEvent(b, "agent.build", data)
    const frame = `id: ${id}\nevent: agent.build\ndata: ${JSON.stringify(data)}\n\n`
    for (const stream of accountStreams.get(b) ?? []) stream.write(frame)
    return send(res, {
      status: 201,
      body: { message: "Build registered", account: b, name: c, build_id: body.build_id, validation_warnings: [] }
    })
  }

  // GET /accounts/{account}/events
  if (method === "GET" && a === "accounts" && c === "events" && parts.length === 3) {
    if (!store.isMember(b, user)) return send(res, { status: 403, body: { error: "forbidden", details: "not a member" } })
    openSse(req, res, "retry: 3000\nevent: ready\ndata: {\"resync\":false}\n\n")
    const set = accountStreams.get(b) ?? new Set()
    accountStreams.set(b, set)
    set.add(res)
    req.on("close", () => {
      set.delete(res)
      if (set.size === 0) accountStreams.delete(b)
    })
    return
  }

  // /deployments/{dep}/messaging/conversations/{conv}/(messages|stream)
  if (a === "deployments" && c === "messaging" && d === "conversations" && parts.length === 6) {
    if (method === "POST" && f === "messages") return send(res, store.send(user, b, e, await readJson(req)))
    if (method === "GET" && f === "messages") return send(res, store.history(user, b, e))
    if (method === "GET" && f === "stream") {
      const { refused, open } = store.stream(user, b, e)
      if (refused) return send(res, refused)
      openSse(req, res, "retry: 3000\n\n")
      const unsubscribe = open((frame) => res.write(frame))
      req.on("close", unsubscribe)
      return
    }
  }

  // GET /deployments/{dep}/files/{key}/content
  if (method === "GET" && a === "deployments" && c === "files" && e === "content" && parts.length === 5) {
    const { refused, file } = store.file(user, b, d)
    if (refused) return send(res, refused)
    const size = statSync(file.path).size
    res.writeHead(200, {
      "content-type": file.content_type,
      "content-length": size,
      "accept-ranges": "bytes",
      "content-disposition": `attachment; filename="${file.filename}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`
    })
    pipeline(createReadStream(file.path), res, () => {})
    return
  }

  send(res, notFound(`no route for ${method} ${req.url}`))
}

const server = createServer((req, res) => {
  const path = req.url.split("?")[0]
  if (!path.startsWith("/api/v1/")) return send(res, notFound(`no route for ${req.method} ${req.url}`))
  const parts = path.slice("/api/v1/".length).split("/").map(decodeURIComponent)
  routes(req, res, parts, store.authenticate(req.headers.authorization)).catch((error) => {
    console.error("baseline: request failed", error)
    if (!res.headersSent) send(res, { status: 500, body: { error: "internal", details: "see the log" } })
    else res.destroy()
  })
})

server.listen(Number(env.BASELINE_PORT ?? 0), env.BASELINE_HOST ?? "127.0.0.1", () => {
  const { address, port } = server.address()
  console.log(`listening on http://${address}:${port}/api/v1`)
})

const stop = () => {
  server.close()
  server.closeAllConnections()
  store.close()
  process.exit(0)
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
