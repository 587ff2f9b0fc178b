// Public `GET /api/v1/agents/{account}/{name}`: 1,000 published agents of
// about 1 KB of JSON each, read at random by autocannon with 50 connections.
// The baselines serve the very bytes the example server answered, read from
// their own SQLite table per request.
import { interleave, pacedCpu, summarize } from "../lib/autocannon-rounds.mjs"
import { startWorkers } from "../lib/proc.mjs"
import { apiOk, benchDir, startBaseline, startExample, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, mb, median, pool, ratio } from "../lib/util.mjs"

const targetBytes = 1024
const filler = "This agent exists so the benchmark has a realistic catalog entry to read. "

const register = (base, name, readme) =>
  apiOk(base, "POST", `/agents/acme/${name}/register`, {
    body: { build_id: "b-1", registry: "ghcr.io/acme", spec_content: `name: ${name}\ndescription: A bench agent\n`, readme }
  }).then(() => apiOk(base, "POST", `/agents/acme/${name}/publish`, { body: { build_id: "b-1", version: "1.0.0" } }))

/**
 * Registers and publishes `count` agents (names of one length) whose JSON is
 * about 1 KB: a probe agent of the same name length measures the JSON
 * without filler first. Resolves with each agent's JSON text.
 */
export const seedAgents = async (base, count) => {
  await register(base, "probe-0000", "# probe\n")
  const probe = await apiOk(base, "GET", "/agents/acme/probe-0000", { headers: {} })
  const pad = Math.max(0, targetBytes - Buffer.byteLength(probe.text))
  const readme = "# probe\n" + filler.repeat(Math.ceil(pad / filler.length) + 1).slice(0, pad)
  const names = Array.from({ length: count }, (_, i) => `agent-${String(i).padStart(4, "0")}`)
  await pool(names, 4, (name) => register(base, name, readme))
  return pool(names, 8, async (name) => ({
    account: "acme",
    name,
    json: (await apiOk(base, "GET", `/agents/acme/${name}`, { headers: {} })).text
  }))
}

export default {
  name: "agent-get",
  title: "public GET /api/v1/agents/{account}/{name}",
  needs: ["autocannon", "better-sqlite3", "fastify"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const example = await startExample(ctx, { dir, fixtures: writeFixtures(dir) })
    ctx.log(`seeding ${scale.agents} agents`)
    const agents = await seedAgents(example.url, scale.agents)
    const bytes = median(agents.map((a) => Buffer.byteLength(a.json)))
    const seed = writeBaselineSeed(dir, { agents })
    const bare = await startBaseline(ctx, "bare", { dir, seed })
    const fastify = await startBaseline(ctx, "fastify", { dir, seed })
    for (const agent of [agents[0], agents.at(-1)]) {
      for (const baseline of [bare, fastify]) {
        const answer = await apiOk(baseline.url, "GET", `/agents/acme/${agent.name}`, { headers: {} })
        if (answer.text !== agent.json) throw new Error(`${baseline.name} answers other bytes than the example server for ${agent.name}`)
      }
    }
    const paths = agents.map((a) => `/api/v1/agents/${a.account}/${a.name}`)
    const load = await startWorkers(`${benchDir}/load/http-load.mjs`, 1, ctx.scope)
    const rounds = await interleave(ctx, load, [example, bare, fastify], () => ({ mode: "paths", paths }))
    const s = summarize(rounds)
    const paced = await pacedCpu(ctx, load, [bare], () => ({ mode: "paths", paths }), s.example.perSecond)
    await load.stop()
    const vsBare = s.example.perSecond / s.bare.perSecond
    return {
      detail: `${fmt(agents.length)} agents, ${fmt(bytes)}-byte JSON, ${scale.connections} connections, ` +
        `${scale.httpRounds} rounds x ${scale.durationS} s`,
      columns: ["target", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "max RSS MB", "failed", "req/s vs bare"],
      rows: ["example", "bare", "fastify"].map((name) => [
        name, fmt(s[name].perSecond), fmt(s[name].p50, 1), fmt(s[name].p99, 1), fmt(s[name].cpuPerRequestUs),
        mb(s[name].rss), fmt(s[name].failures), ratio(s[name].perSecond, s.bare.perSecond)
      ]),
      goals: [
        goal("req/s vs bare node:http + better-sqlite3", `${vsBare.toFixed(2)}x`, ">= 0.5x", vsBare >= 0.5),
        goal(`p99 at ${scale.connections} connections`, `${fmt(s.example.p99, 1)} ms`, "<= 15 ms", s.example.p99 <= 15),
        goal("no failed requests", fmt(s.example.failures), "0", s.example.failures === 0)
      ],
      notes: [
        `bare held to the example's rate (${fmt(s.example.perSecond)} req/s): ${fmt(paced.bare)} µs of server CPU per ` +
        `request; the example's CPU per request is ${(s.example.cpuPerRequestUs / paced.bare).toFixed(2)}x that`
      ],
      raw: { bytes, rounds, pacedBareCpuUs: paced.bare }
    }
  }
}
