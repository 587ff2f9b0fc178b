// HTTP load with autocannon, in a process of its own (forked by the runner,
// so pinned to the load CPUs). Commands arrive over IPC:
//   { cmd: "run", origin, connections, seconds, mode: "paths", paths, headers }
//     GETs a random path of `paths` per request.
//   { cmd: "run", origin, connections, seconds, mode: "send", prefix, content, headers }
//     POSTs { content } to `${prefix}/<new UUID>/messages`: one new
//     conversation per request; answers the UUIDs whose send got a 2xx.
import { randomUUID } from "node:crypto"

let autocannon
try {
  autocannon = (await import("autocannon")).default
} catch {
  autocannon = undefined
}

const run = (message) =>
  new Promise((resolve, reject) => {
    if (!autocannon) return reject(new Error("autocannon is not installed: run `npx -y pnpm@10 install`"))
    const accepted = []
    const request = message.mode === "paths"
      ? {
        method: "GET",
        setupRequest: (req) => ({ ...req, path: message.paths[Math.floor(Math.random() * message.paths.length)] })
      }
      : {
        method: "POST",
        body: JSON.stringify({ content: message.content }),
        setupRequest: (req, context) => {
          context.conversation = randomUUID()
          return { ...req, path: `${message.prefix}/${context.conversation}/messages` }
        },
        onResponse: (status, _body, context) => {
          if (status >= 200 && status < 300) accepted.push(context.conversation)
        }
      }
    const instance = autocannon({
      url: message.origin,
      connections: message.connections,
      duration: message.seconds,
      headers: message.headers,
      requests: [request],
      // Requests a second across all connections, when a round is held to a rate (undefined: as fast as it goes).
      overallRate: message.rate,
      timeout: 10
    }, (error, result) => {
      if (error) return reject(error)
      resolve({
        seconds: result.duration,
        ok: result["2xx"],
        perSecond: result["2xx"] / result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        non2xx: result.non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        accepted
      })
    })
    // Bounded even if the target hangs: autocannon stops itself after `seconds`; this is the backstop.
    const backstop = setTimeout(() => instance.stop(), (message.seconds + 15) * 1000)
    instance.on("done", () => clearTimeout(backstop))
  })

process.on("message", async (message) => {
  try {
    if (message.cmd === "ping") return process.send({ id: message.id, ready: Boolean(autocannon) })
    if (message.cmd === "run") return process.send({ id: message.id, ...(await run(message)) })
    process.send({ id: message.id, error: `unknown command ${message.cmd}` })
  } catch (error) {
    process.send({ id: message.id, error: error.message })
  }
})
process.on("disconnect", () => process.exit(0))
