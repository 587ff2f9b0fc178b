#!/usr/bin/env node
// The Fastify baseline, for reference beside the bare one: the same store and
// the same answers for the HTTP workloads (agent read, send, history), served
// by Fastify's router and serializer. Same environment and listening line as
// bare.mjs.
import Fastify from "fastify"
import { notFound, open, unauthorized } from "./store.mjs"

const env = process.env
const store = open({ filename: env.BASELINE_DB, seedPath: env.BASELINE_SEED, agent: env.BASELINE_AGENT ?? "echo" })
const app = Fastify({ logger: false, bodyLimit: 2 * 1024 * 1024 })

const reply = (res, { status, body }) => res.code(status).type("application/json").send(body)

app.get("/api/v1/agents/:account/:name", (req, res) => {
  const json = store.agentJson(req.params.account, req.params.name)
  reply(res, json === undefined ? notFound(`agent ${req.params.account}/${req.params.name} does not exist`) : { status: 200, body: json })
})

const authenticated = (handler) => (req, res) => {
  const user = store.authenticate(req.headers.authorization)
  reply(res, user === undefined ? unauthorized : handler(req, user))
}

app.post(
  "/api/v1/deployments/:dep/messaging/conversations/:conv/messages",
  authenticated((req, user) => store.send(user, req.params.dep, req.params.conv, req.body))
)
app.get(
  "/api/v1/deployments/:dep/messaging/conversations/:conv/messages",
  authenticated((req, user) => store.history(user, req.params.dep, req.params.conv))
)

app.listen({ port: Number(env.BASELINE_PORT ?? 0), host: env.BASELINE_HOST ?? "127.0.0.1" }).then(() => {
  const { address, port } = app.server.address()
  console.log(`listening on http://${address}:${port}/api/v1`)
})

const stop = () => {
  app.server.closeAllConnections()
  app.close().finally(() => {
    store.close()
    process.exit(0)
  })
}
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
