// The chat flow client: forked by the runner (so pinned to the load CPUs),
// it runs `clients` loops at once, each doing what a chat client does, over
// and over until its time is up: send a message to a new conversation, open
// that conversation's reply stream, read it until `message.completed`,
// close it. Sends go over kept-alive connections (one per loop); each
// stream is a connection of its own, closed by the client once the reply
// is complete, as a browser's EventSource would be. `part` measures one half
// of that alone: "send" (sends to new conversations, no stream) or "stream"
// (each loop makes one conversation with a finished reply, then opens and
// reads its stream over and over). Commands over IPC:
//   flow  { prefix, token, clients, seconds, content, expected, flowTimeoutMs, part }
//         `prefix` may be a list (servers behind a round-robin split): each
//         request, a send or a stream, goes to the next one in turn
//         answers the counts, this process's CPU time, and per completed flow
//         the time from the send's start to the first `message.delta` and to
//         `message.completed`
import { randomUUID } from "node:crypto"
import { Agent, request } from "node:http"
import { frameReader } from "../lib/sse-frames.mjs"

const now = () => performance.timeOrigin + performance.now()

/** Sends: one kept-alive connection per loop. */
let sendAgent
/** Streams: a new connection each, destroyed at the end of its reply. */
const streamAgent = new Agent({ keepAlive: true, maxSockets: Infinity })

/**
 * POSTs `text`; resolves once a 2xx answer was read. A send that went out on
 * a kept-alive socket the server was closing at that moment (its idle
 * timeout) is sent again once, on a new socket: the server never saw it.
 */
const post = (url, headers, text, retried = false) =>
  new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      agent: sendAgent,
      headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) }
    }, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () =>
        res.statusCode >= 200 && res.statusCode < 300
          ? resolve()
          : reject(new Error(`send answered ${res.statusCode}: ${body.slice(0, 200)}`))
      )
      res.on("error", reject)
    })
    req.on("error", (error) => {
      if (!retried && req.reusedSocket && error.code === "ECONNRESET") resolve(post(url, headers, text, true))
      else reject(error)
    })
    req.end(text)
  })

/**
 * Opens a reply stream; `onEvent(event, data)` gets each event with its data
 * parsed, `onEnd(message)` an error or an end before the reply completed.
 * Returns the request, to destroy.
 */
const openStream = (url, headers, onEvent, onEnd) => {
  const req = request(url, { agent: streamAgent, headers: { ...headers, accept: "text/event-stream" } }, (res) => {
    if (res.statusCode !== 200) {
      res.resume()
      return onEnd(`stream answered ${res.statusCode}`)
    }
    res.setEncoding("utf8")
    res.on("data", frameReader((event, data) => {
      let parsed
      try {
        parsed = JSON.parse(data)
      } catch {
        onEnd(`not JSON in a ${event} event: ${data.slice(0, 100)}`)
        return false
      }
      onEvent(event, parsed)
    }))
    res.on("end", () => onEnd("the stream ended before the reply completed"))
    res.on("error", (error) => onEnd(error.message))
  })
  req.on("error", (error) => onEnd(error.message))
  req.end()
  return req
}

/** Both halves: the flow as a client lives it. */
const whole = { send: true, stream: true }

/**
 * One flow; resolves with { outcome, first, done }: outcome "completed" (the
 * reply's text is `expected`, whole), "wrong", "failed" (message.failed),
 * "timeout" or an error message; the times in ms from the flow's start.
 * `steps` says which halves run: the send (to `path`, a new conversation
 * unless given) and the stream.
 */
const flow = ({ next, headers, body, expected, flowTimeoutMs }, steps = whole, path = randomUUID()) =>
  new Promise((resolve) => {
    const started = now()
    let first = NaN
    let stream
    let settled = false
    const settle = (outcome, done = NaN) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      stream?.destroy()
      resolve({ outcome, first, done })
    }
    const timer = setTimeout(() => settle("timeout"), flowTimeoutMs)
    const sent = steps.send ? post(`${next()}/${path}/messages`, headers, body) : Promise.resolve()
    sent.then(() => {
      if (settled) return
      if (!steps.stream) return settle("completed", now() - started)
      stream = openStream(`${next()}/${path}/stream`, headers, (event, data) => {
        if (event === "message.delta") {
          if (Number.isNaN(first)) first = now() - started
        } else if (event === "message.completed") {
          settle(data.content === expected ? "completed" : "wrong", now() - started)
        } else if (event === "message.failed") {
          settle("failed")
        }
      }, (message) => settle(message))
    }, (error) => settle(error.message))
  })

const run = async ({ prefix, token, clients, seconds, content, expected = content, flowTimeoutMs, part = "whole" }) => {
  sendAgent?.destroy()
  sendAgent = new Agent({ keepAlive: true, maxSockets: clients })
  // The servers in turn, as a round-robin load balancer hands out requests.
  const prefixes = Array.isArray(prefix) ? prefix : [prefix]
  let turn = 0
  const options = {
    next: () => prefixes[turn++ % prefixes.length],
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ content }),
    expected,
    flowTimeoutMs
  }
  const first = []
  const done = []
  const counts = { completed: 0, wrong: 0, failed: 0, timeouts: 0, errors: 0 }
  const errors = new Set()
  const started = now()
  const cpuBefore = process.cpuUsage()
  const deadline = started + seconds * 1000
  const steps = { send: part !== "stream", stream: part !== "send" }
  const loop = async () => {
    // The stream alone: a conversation of this loop's, its reply finished first (not counted).
    const path = part === "stream" ? randomUUID() : undefined
    if (path !== undefined) {
      const made = await flow(options, whole, path)
      if (made.outcome !== "completed") {
        counts.errors++
        errors.add(`the stream's conversation: ${made.outcome}`)
        return
      }
    }
    while (now() < deadline) {
      const result = await flow(options, steps, path)
      if (result.outcome === "completed") {
        counts.completed++
        first.push(result.first)
        done.push(result.done)
      } else if (result.outcome === "wrong") counts.wrong++
      else if (result.outcome === "failed") counts.failed++
      else if (result.outcome === "timeout") counts.timeouts++
      else {
        counts.errors++
        errors.add(result.outcome)
      }
    }
  }
  await Promise.all(Array.from({ length: clients }, loop))
  const cpu = process.cpuUsage(cpuBefore)
  return {
    // This process's own CPU: near a whole CPU means the client, not the server, set the pace.
    cpuUs: cpu.user + cpu.system,
    ...counts,
    seconds: (now() - started) / 1000,
    errorSamples: [...errors].slice(0, 3),
    first: Float64Array.from(first),
    done: Float64Array.from(done)
  }
}

process.on("message", async (message) => {
  try {
    if (message.cmd === "ping") return process.send({ id: message.id })
    if (message.cmd === "flow") return process.send({ id: message.id, ...(await run(message)) })
    process.send({ id: message.id, error: `unknown command ${message.cmd}` })
  } catch (error) {
    process.send({ id: message.id, error: error.message })
  }
})
process.on("disconnect", () => process.exit(0))
