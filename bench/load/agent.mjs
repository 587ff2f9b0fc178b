#!/usr/bin/env node
// The bench agent: an OpenAI-compatible streaming endpoint
// (POST /v1/chat/completions) whose chunks carry the wall-clock time they
// were written, `[t:<ms>] `, so a client of the server in between can
// measure chunk-to-client latency. A last user message
// `... chunks=<n> interval=<ms>` gets n stamped chunks `interval` ms apart;
// anything else gets the single chunk "ok". Prints
// `agent listening on http://127.0.0.1:PORT`; stops on SIGTERM/SIGINT.
import { createServer } from "node:http"

const now = () => performance.timeOrigin + performance.now()
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

const server = createServer((req, res) => {
  if (req.method !== "POST" || !req.url.startsWith("/v1/chat/completions")) {
    res.writeHead(404).end()
    return
  }
  let body = ""
  req.setEncoding("utf8")
  req.on("data", (text) => (body += text))
  req.on("end", () => {
    let last = ""
    try {
      last = JSON.parse(body).messages.filter((m) => m.role === "user").at(-1)?.content ?? ""
    } catch {}
    const plan = /chunks=(\d+) interval=(\d+)/.exec(last)
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    if (!plan) {
      res.write(chunk({ content: "ok" }))
      res.end(chunk({}, "stop") + "data: [DONE]\n\n")
      return
    }
    const [count, interval] = [Number(plan[1]), Number(plan[2])]
    let sent = 0
    let timer
    const next = () => {
      res.write(chunk({ content: `[t:${now().toFixed(3)}] ` }))
      if (++sent < count) timer = setTimeout(next, interval)
      else res.end(chunk({}, "stop") + "data: [DONE]\n\n")
    }
    timer = setTimeout(next, interval)
    res.on("close", () => clearTimeout(timer))
  })
})

server.keepAliveTimeout = 60_000
server.listen(Number(process.env.AGENT_PORT ?? 0), "127.0.0.1", () => {
  console.log(`agent listening on http://127.0.0.1:${server.address().port}`)
})
const stop = () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
