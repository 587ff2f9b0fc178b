// The SSE load client: one of several processes forked by the runner, each
// holding many server-sent-event streams over node:http (one connection per
// stream). Commands arrive over IPC and each is answered once:
//   events-connect  open `count` account event streams, each until its `ready`
//   events-await    wait until every open stream got the agent.build event of build `key`
//   replies-open    per conversation: send a first message, open its reply stream, read that reply to the end
//   replies-go      send `content` to every conversation and time each stamped chunk of the replies
//   close           close every stream
// Arrival times are wall-clock milliseconds (performance.timeOrigin + now),
// comparable with the runner's and the bench agent's on one machine.
import { Agent, request } from "node:http"
import { frameReader } from "../lib/sse-frames.mjs"

const now = () => performance.timeOrigin + performance.now()
const stamp = /\[t:(\d+(?:\.\d+)?)\]/g

/** Open streams of this process. */
let streams = []

/**
 * Opens a stream; `onEvent(event, data)` gets each event (data parsed as
 * JSON when it is). Resolves with the stream once the response headers
 * arrived with a 200, rejects otherwise.
 */
const openStream = (url, headers, onEvent) =>
  new Promise((resolve, reject) => {
    const stream = { closed: false, close: () => req.destroy() }
    const req = request(url, { headers: { accept: "text/event-stream", ...headers }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        req.destroy()
        return reject(new Error(`stream answered ${res.statusCode}`))
      }
      res.setEncoding("utf8")
      res.on("data", frameReader((event, data) => {
        let parsed = data
        try {
          parsed = JSON.parse(data)
        } catch {}
        onEvent(event, parsed)
      }))
      res.on("close", () => {
        stream.closed = true
      })
      resolve(stream)
    })
    req.on("error", (error) => {
      stream.closed = true
      reject(error)
    })
    req.end()
  })

/** Runs `fn` over `items` with at most `limit` in flight. */
const pool = async (items, limit, fn) => {
  let next = 0
  const lane = async () => {
    while (next < items.length) await fn(items[next++])
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
}

const withDeadline = (promise, ms) =>
  Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve("timeout"), ms).unref())])

// ---- account event streams ----

/** Per build key: how many streams got it, and when. */
const builds = new Map()

const eventsConnect = async ({ url, token, count, concurrency, timeoutMs }) => {
  const errors = []
  let connected = 0
  const deadline = now() + timeoutMs
  await pool(Array.from({ length: count }), concurrency, async () => {
    if (now() > deadline) return void errors.push("time limit")
    const seen = new Set()
    let ready
    const isReady = new Promise((resolve) => (ready = resolve))
    try {
      const stream = await openStream(url, { authorization: `Bearer ${token}` }, (event, data) => {
        if (event === "ready") return ready()
        if (event !== "agent.build") return
        const entry = builds.get(data.build_id) ?? { count: 0, arrivals: [], duplicates: 0 }
        builds.set(data.build_id, entry)
        if (seen.has(data.build_id)) return void entry.duplicates++
        seen.add(data.build_id)
        entry.count++
        entry.arrivals.push(now())
      })
      if ((await withDeadline(isReady, Math.max(1, deadline - now()))) === "timeout") {
        stream.close()
        return void errors.push("no ready event in time")
      }
      streams.push(stream)
      connected++
    } catch (error) {
      errors.push(error.message)
    }
  })
  return { connected, failed: errors.length, errors: [...new Set(errors)].slice(0, 3) }
}

const eventsAwait = async ({ key, timeoutMs }) => {
  const expected = streams.filter((s) => !s.closed).length
  const deadline = now() + timeoutMs
  while ((builds.get(key)?.count ?? 0) < expected && now() < deadline) await new Promise((r) => setTimeout(r, 5))
  const entry = builds.get(key) ?? { count: 0, arrivals: [], duplicates: 0 }
  builds.delete(key)
  return { expected, received: entry.count, duplicates: entry.duplicates, arrivals: Float64Array.from(entry.arrivals) }
}

// ---- conversations and their reply streams ----

const keepAlive = new Agent({ keepAlive: true, maxSockets: 32 })

/**
 * POSTs `body` and resolves with the answer of a 200. A request that went out
 * on a kept-alive socket the server was closing at that moment (its idle
 * timeout) is sent again once, on a new socket, as Node's documentation of
 * `request.reusedSocket` advises: the server never saw it.
 */
const postJson = (url, token, body, retried = false) =>
  new Promise((resolve, reject) => {
    const text = JSON.stringify(body)
    const req = request(url, {
      method: "POST",
      agent: keepAlive,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(text) }
    }, (res) => {
      let answer = ""
      res.setEncoding("utf8")
      res.on("data", (t) => (answer += t))
      res.on("end", () => (res.statusCode === 200 ? resolve(answer) : reject(new Error(`send answered ${res.statusCode}: ${answer.slice(0, 200)}`))))
    })
    req.on("error", (error) => {
      if (!retried && req.reusedSocket && error.code === "ECONNRESET") resolve(postJson(url, token, body, true))
      else reject(error)
    })
    req.setTimeout(30_000, () => req.destroy(new Error("send timed out")))
    req.end(text)
  })

/** Conversations of this process: { id, stream, onTurn } where onTurn gets the reply events. */
let conversations = []

const repliesOpen = async ({ prefix, token, ids, warm, concurrency, timeoutMs }) => {
  const errors = []
  const deadline = now() + timeoutMs
  await pool(ids, concurrency, async (id) => {
    if (now() > deadline) return void errors.push("time limit")
    const conversation = { id, turn: undefined }
    try {
      await postJson(`${prefix}/${id}/messages`, token, { content: warm })
      let first
      const firstDone = new Promise((resolve) => (first = resolve))
      conversation.turn = (event) => {
        if (event === "message.completed" || event === "message.failed") first(event)
      }
      conversation.stream = await openStream(`${prefix}/${id}/stream`, { authorization: `Bearer ${token}` }, (event, data) =>
        conversation.turn?.(event, data)
      )
      streams.push(conversation.stream)
      const end = await withDeadline(firstDone, Math.max(1, deadline - now()))
      if (end !== "message.completed") throw new Error(end === "timeout" ? "first reply did not end in time" : "first reply failed")
      conversations.push(conversation)
    } catch (error) {
      conversation.stream?.close()
      errors.push(error.message)
    }
  })
  return { opened: conversations.length, failed: errors.length, errors: [...new Set(errors)].slice(0, 3) }
}

const repliesGo = async ({ prefix, token, content, concurrency, timeoutMs }) => {
  const latencies = []
  // When the agent wrote each chunk, beside its latency: the runner tells the chunks written after every send was answered.
  const written = []
  const errors = []
  let completed = 0
  let failed = 0
  let chunks = 0
  const ends = conversations.map((conversation) =>
    new Promise((resolve) => {
      conversation.abandon = resolve
      conversation.turn = (event, data) => {
        if (event === "message.delta") {
          const arrived = now()
          for (const match of String(data.delta).matchAll(stamp)) {
            latencies.push(arrived - Number(match[1]))
            written.push(Number(match[1]))
            chunks++
          }
        } else if (event === "message.completed") {
          completed++
          resolve()
        } else if (event === "message.failed") {
          failed++
          resolve()
        }
      }
    })
  )
  let sendsAnswered
  const sends = pool(conversations, concurrency, (conversation) =>
    postJson(`${prefix}/${conversation.id}/messages`, token, { content }).catch((error) => {
      errors.push(error.message)
      conversation.abandon()
    })
  ).then(() => {
    sendsAnswered = now()
  })
  await withDeadline(Promise.all([sends, ...ends]), timeoutMs)
  return {
    conversations: conversations.length,
    completed,
    failed,
    chunks,
    sendErrors: errors.length,
    errors: [...new Set(errors)].slice(0, 3),
    latencies: Float64Array.from(latencies),
    written: Float64Array.from(written),
    sendsAnswered
  }
}

const close = () => {
  for (const stream of streams) stream.close()
  const closed = streams.length
  streams = []
  conversations = []
  builds.clear()
  return { closed }
}

const commands = {
  ping: () => ({}),
  "events-connect": eventsConnect,
  "events-await": eventsAwait,
  "replies-open": repliesOpen,
  "replies-go": repliesGo,
  close
}

process.on("message", async (message) => {
  try {
    const command = commands[message.cmd]
    if (!command) throw new Error(`unknown command ${message.cmd}`)
    process.send({ id: message.id, ...(await command(message)) })
  } catch (error) {
    process.send({ id: message.id, error: error.message })
  }
})
process.on("disconnect", () => process.exit(0))
