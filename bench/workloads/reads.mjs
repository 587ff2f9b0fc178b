// Authenticated reads of a member, each route measured on its own: the
// history of a 2-message conversation, the conversation list, the agent as
// a member sees it (every build), the profile (`GET /me`) and the agent's
// deployment history. Both servers start from the same fixtures (the
// deployments) and get the same API calls before the rounds (the agent's
// builds, the conversations); the bare baseline serves the agent's JSON
// bytes the example server answered, and every other answer is built from
// its own tables per request. Before the rounds each route's answers of the
// two are compared: the same bytes where the data is the same, the same
// JSON shape where ids and times differ.
import { randomUUID } from "node:crypto"
import { interleave, pacedCpu, summarize } from "../lib/autocannon-rounds.mjs"
import { startWorkers } from "../lib/proc.mjs"
import {
  apiOk,
  auth,
  benchDir,
  deployment,
  startBaseline,
  startExample,
  writeBaselineSeed,
  writeFixtures
} from "../lib/targets.mjs"
import { fmt, goal, now, pool, ratio, sleep } from "../lib/util.mjs"

const conversationsPath = `/deployments/${deployment}/messaging/conversations`

/** `count - 1` deployments of acme/helper besides dep-1, a day apart, in the fixtures' format. */
const moreDeployments = (count) =>
  Array.from({ length: Math.max(0, count - 1) }, (_, i) => ({
    id: `dep-${i + 2}`,
    account: "acme",
    agent: "acme/helper",
    build_id: `b-${(i % 3) + 1}`,
    namespace: `acme-helper-${i + 2}`,
    status: i === count - 2 ? "running" : "stopped",
    deployed_at: new Date(Date.UTC(2026, 0, i + 2)).toISOString(),
    undeployed_at: i === count - 2 ? null : new Date(Date.UTC(2026, 0, i + 3)).toISOString(),
    spec: { replicas: 1 + (i % 3), env: { LOG_LEVEL: "info" } }
  }))

/** Registers three builds of acme/helper and publishes two; resolves with its public and member JSON. */
const seedAgent = async (base) => {
  for (const build of ["b-1", "b-2", "b-3"]) {
    await apiOk(base, "POST", "/agents/acme/helper/register", {
      body: {
        build_id: build,
        registry: "ghcr.io/acme",
        spec_content: `name: helper\ndescription: The bench's helper agent, build ${build}\n`,
        readme: `# helper\n\nBuild ${build} of the helper agent.\n`
      }
    })
  }
  for (const [build, version] of [["b-1", "1.0.0"], ["b-2", "1.1.0"]]) {
    await apiOk(base, "POST", "/agents/acme/helper/publish", { body: { build_id: build, version } })
  }
  return {
    account: "acme",
    name: "helper",
    json: (await apiOk(base, "GET", "/agents/acme/helper", { headers: {} })).text,
    member_json: (await apiOk(base, "GET", "/agents/acme/helper")).text
  }
}

/** Sends the first message of each conversation (in order) and waits until every echo reply is stored. */
const seedConversations = async (base, ids) => {
  for (const [i, id] of ids.entries()) {
    await apiOk(base, "POST", `${conversationsPath}/${id}/messages`, { body: { content: `question ${i + 1}: echo me` } })
  }
  const deadline = now() + 30_000
  await pool(ids, 4, async (id) => {
    for (;;) {
      const { json } = await apiOk(base, "GET", `${conversationsPath}/${id}/messages`)
      if (json.messages.length === 2 && json.messages[1].status === "complete") return
      if (now() > deadline) throw new Error(`${base}: the reply of conversation ${id} was not stored within 30 s`)
      await sleep(20)
    }
  })
}

/** A JSON value with every leaf replaced by its type: what two answers about different ids share. */
const shape = (value) =>
  Array.isArray(value)
    ? value.map(shape)
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.entries(value).map(([key, v]) => [key, shape(v)]))
    : value === null
    ? "null"
    : typeof value

export default {
  name: "reads",
  title: "authenticated member reads: history, conversation list, agent, /me, deployment history",
  needs: ["autocannon", "better-sqlite3"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const deployments = moreDeployments(scale.readDeployments)
    // One public URL for both, so that the links of the deployment records are the same bytes.
    const publicUrl = "http://bench.localhost/api/v1"
    const fixtures = writeFixtures(dir, {}, { deployments })
    const example = await startExample(ctx, { dir, fixtures, env: { HOSTING_PUBLIC_URL: publicUrl } })
    // --against: another build of the server, on its own database, seeded the same and loaded in turn with this one.
    const against = ctx.against === undefined ? [] : [
      await startExample(ctx, {
        dir, fixtures, env: { HOSTING_PUBLIC_URL: publicUrl }, name: "against", main: ctx.against, database: "against.db"
      })
    ]
    ctx.log(`seeding: the agent's builds, ${scale.readConversations} conversations, ${scale.readDeployments} deployments`)
    const agent = await seedAgent(example.url)
    for (const other of against) await seedAgent(other.url)
    const bare = await startBaseline(ctx, "bare", {
      dir,
      seed: writeBaselineSeed(dir, { agents: [agent], deployments }),
      env: { BASELINE_PUBLIC_URL: publicUrl }
    })
    const targets = [example, ...against, bare]
    const ids = Array.from({ length: scale.readConversations }, () => randomUUID())
    for (const target of targets) await seedConversations(target.url, ids)

    const allRoutes = [
      { name: "history", paths: ids.map((id) => `${conversationsPath}/${id}/messages`), same: "shape" },
      { name: "conversations", paths: [`/deployments/${deployment}/chat/conversations`], same: "shape" },
      { name: "agent", paths: ["/agents/acme/helper"], same: "bytes" },
      { name: "me", paths: ["/me"], same: "bytes" },
      { name: "deployments", paths: ["/agents/acme/helper/deployment/history"], same: "bytes" }
    ]
    const routes = ctx.routes === undefined ? allRoutes : allRoutes.filter((route) => ctx.routes.includes(route.name))
    if (routes.length === 0) {
      throw new Error(`--routes ${ctx.routes.join(",")}: none of ${allRoutes.map((route) => route.name).join(", ")}`)
    }
    for (const route of routes) {
      const [mine, theirs] = await Promise.all([example, bare].map((t) => apiOk(t.url, "GET", route.paths[0])))
      const same = route.same === "bytes"
        ? mine.text === theirs.text
        : JSON.stringify(shape(mine.json)) === JSON.stringify(shape(theirs.json))
      if (!same) {
        throw new Error(`bare answers ${route.paths[0]} with other ${route.same === "bytes" ? "bytes" : "JSON"} than ` +
          `the example server:\n  example: ${mine.text.slice(0, 400)}\n  bare:    ${theirs.text.slice(0, 400)}`)
      }
    }

    const load = await startWorkers(`${benchDir}/load/http-load.mjs`, 1, ctx.scope)
    // Each route gets its own interleaved rounds; the warm-up is no longer than a round.
    const routeCtx = {
      ...ctx,
      scale: { ...scale, httpRounds: scale.readRounds, durationS: scale.readS, warmupS: Math.min(scale.warmupS, scale.readS) }
    }
    const results = {}
    for (const route of routes) {
      ctx.log(`route ${route.name}: GET /api/v1${route.paths[0]}${route.paths.length > 1 ? ` (1 of ${route.paths.length})` : ""}`)
      const request = () => ({ mode: "paths", paths: route.paths.map((path) => `/api/v1${path}`), headers: auth })
      const rounds = await interleave(routeCtx, load, targets, request)
      const s = summarize(rounds)
      const paced = await pacedCpu(routeCtx, load, [bare], request, s.example.perSecond)
      results[route.name] = { rounds, s, pacedBare: paced.bare }
    }
    await load.stop()

    const failures = Object.values(results).reduce((n, { s }) => n + s.example.failures, 0)
    return {
      detail: `${scale.readConversations} conversations of 2 messages, an agent of 3 builds, ${scale.readDeployments} ` +
        `deployments; ${scale.connections} connections, per route ${scale.readRounds} rounds x ${scale.readS} s`,
      columns: ["route", "target", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "failed", "req/s vs bare"],
      rows: routes.flatMap((route) =>
        targets.map(({ name }) => {
          const { s } = results[route.name]
          return [
            route.name, name, fmt(s[name].perSecond), fmt(s[name].p50, 1), fmt(s[name].p99, 1),
            fmt(s[name].cpuPerRequestUs), fmt(s[name].failures), ratio(s[name].perSecond, s.bare.perSecond)
          ]
        })
      ),
      goals: [
        ...routes.flatMap((route) => {
          const { s } = results[route.name]
          const vsBare = s.example.perSecond / s.bare.perSecond
          return [
            goal(`${route.name}: req/s vs bare`, `${vsBare.toFixed(2)}x`, ">= 0.5x", vsBare >= 0.5),
            goal(`${route.name}: p99 at ${scale.connections} connections`, `${fmt(s.example.p99, 1)} ms`, "<= 15 ms",
              s.example.p99 <= 15)
          ]
        }),
        goal("no failed requests", fmt(failures), "0", failures === 0)
      ],
      notes: [
        "routes: history = GET .../messaging/conversations/{id}/messages (a random one of the conversations), " +
        `conversations = GET /deployments/${deployment}/chat/conversations, agent = GET /agents/acme/helper with the ` +
        "member's token, me = GET /me, deployments = GET /agents/acme/helper/deployment/history",
        "bare held to the example's rate, per route: " + routes.map((route) => {
          const { s, pacedBare } = results[route.name]
          return `${route.name} ${fmt(pacedBare)} µs of server CPU per request (the example's is ` +
            `${(s.example.cpuPerRequestUs / pacedBare).toFixed(2)}x that)`
        }).join(", ")
      ],
      raw: Object.fromEntries(Object.entries(results).map(([name, { rounds, pacedBare }]) => [name, { rounds, pacedBareCpuUs: pacedBare }]))
    }
  }
}
