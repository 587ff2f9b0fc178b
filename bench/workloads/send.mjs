// Send a message and get the echo agent's reply (delay 0) streamed and
// stored: autocannon POSTs each message to a new conversation, then every
// accepted conversation's history is read back to check that its reply is
// complete and holds the echoed text.
import { interleave, summarize } from "../lib/autocannon-rounds.mjs"
import { startWorkers } from "../lib/proc.mjs"
import { api, benchDir, deployment, startBaseline, startExample, token, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, mb, now, pool, ratio, sleep } from "../lib/util.mjs"

const content = "hello from the bench, please echo this back"
const prefix = `/deployments/${deployment}/messaging/conversations`

/**
 * Reads the history of each conversation until its reply is complete (a
 * streaming one is read again a little later), within `seconds`.
 */
const verify = async (target, ids, seconds) => {
  const deadline = now() + seconds * 1000
  const counts = { accepted: ids.length, complete: 0, wrong: 0, unchecked: 0 }
  await pool(ids, 16, async (id) => {
    for (;;) {
      if (now() > deadline) return void counts.unchecked++
      const { status, json } = await api(target.url, "GET", `${prefix}/${id}/messages`).catch(() => ({ status: 0 }))
      const reply = json?.messages?.[1]
      if (status === 200 && reply?.status === "streaming") {
        await sleep(100)
        continue
      }
      if (status === 200 && json.messages.length === 2 && reply.role === "assistant" && reply.status === "complete" &&
        reply.content === content) counts.complete++
      else counts.wrong++
      return
    }
  })
  return counts
}

export default {
  name: "send",
  title: "send a message, echo reply streamed and stored (delay 0)",
  needs: ["autocannon", "better-sqlite3", "fastify"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const example = await startExample(ctx, { dir, fixtures: writeFixtures(dir) })
    // --against: another build of the server, on its own database, loaded in turn with this one.
    const against = ctx.against === undefined
      ? []
      : [await startExample(ctx, { dir, fixtures: writeFixtures(dir), name: "against", main: ctx.against, database: "against.db" })]
    const seed = writeBaselineSeed(dir)
    const bare = await startBaseline(ctx, "bare", { dir, seed })
    const fastify = await startBaseline(ctx, "fastify", { dir, seed })
    const load = await startWorkers(`${benchDir}/load/http-load.mjs`, 1, ctx.scope)
    const rounds = await interleave(
      ctx,
      load,
      [example, ...against, bare, fastify],
      () => ({
        mode: "send",
        prefix: `/api/v1${prefix}`,
        content,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }
      }),
      async (target, accepted) => {
        const counts = await verify(target, accepted, scale.verifyS)
        ctx.log(`  ${target.name}: ${fmt(counts.complete)} of ${fmt(counts.accepted)} replies complete and stored` +
          (counts.unchecked ? ` (${fmt(counts.unchecked)} not checked in ${scale.verifyS} s)` : ""))
        return counts
      }
    )
    await load.stop()
    const s = summarize(rounds)
    const checks = Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, list.reduce((sum, r) => ({
      accepted: sum.accepted + r.check.accepted,
      complete: sum.complete + r.check.complete
    }), { accepted: 0, complete: 0 })]))
    const everyReply = checks.example.accepted > 0 && checks.example.complete === checks.example.accepted
    return {
      detail: `one new conversation per send, ${scale.connections} connections, ${scale.httpRounds} rounds x ${scale.durationS} s`,
      columns: ["target", "sends/s", "p50 ms", "p99 ms", "CPU µs/send", "max RSS MB", "failed", "replies complete",
        "sends/s vs bare"],
      rows: Object.keys(rounds).map((name) => [
        name, fmt(s[name].perSecond), fmt(s[name].p50, 1), fmt(s[name].p99, 1), fmt(s[name].cpuPerRequestUs),
        mb(s[name].rss), fmt(s[name].failures), `${fmt(checks[name].complete)}/${fmt(checks[name].accepted)}`,
        ratio(s[name].perSecond, s.bare.perSecond)
      ]),
      goals: [
        goal("sends/s on SQLite", fmt(s.example.perSecond), ">= 1,500", s.example.perSecond >= 1500),
        goal("every reply complete and stored", `${fmt(checks.example.complete)}/${fmt(checks.example.accepted)}`, "all",
          everyReply),
        goal("no failed sends", fmt(s.example.failures), "0", s.example.failures === 0)
      ],
      raw: { rounds }
    }
  }
}
