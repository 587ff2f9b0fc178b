// The chat flow as a client lives it: send a message to a new conversation
// (echo agent, delay 0), open that conversation's reply stream, read it
// until `message.completed`, close it, again and again, by 10 and then by 50
// clients at once (load/flow-client.mjs). Measured per round: completed
// flows a second, the server's CPU per flow (from /proc), and from each
// send's start the time to the first `message.delta` and to
// `message.completed`. The bare baseline does the same flow: its send stores
// the message and the reply, its stream replays the reply's events.
//
// `--set flowDatabase=postgres` puts the example server on a fresh Postgres
// database (lib/postgres.mjs), dropped after the run; bare stays on SQLite,
// the yardstick. The server CPU per flow then leaves out Postgres's own.
// On Postgres a third target runs too: two example server processes on one
// database of their own, the clients' requests split between them in turn
// (each send and each stream to the next process, as a round-robin load
// balancer would), so a reply is often streamed by the process that did not
// run it; its CPU per flow is both processes'.
//
// `--set flowAgent=http` puts the bench agent (load/agent.mjs, one chunk "ok"
// a reply) behind the example servers' `http` agent runtime, as a deployment
// runs, and bare relays it with Node's own client (its `relay` agent): the
// flow with the agent's request and answer in it. The goals are the echo's
// and are not judged then.
//
// `--set flowPart=send` or `--set flowPart=stream` measures one half of the
// flow alone, on every target (load/flow-client.mjs): the sends, or the
// stream of a finished reply, opened and read again and again. The goals
// are the whole flow's and are not judged then; the halves' CPU set beside
// the whole's tells what their meeting costs (docs/performance.md).
import { cpuMicros, startWorkers } from "../lib/proc.mjs"
import { createDatabase, postgresServer } from "../lib/postgres.mjs"
import { benchDir, deployment, startAgent, startBaseline, startExample, token, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, inTurn, median, percentile, ratio } from "../lib/util.mjs"

const content = "hello from the bench, please echo this back"

/** One round of `clients` flows on `target` for `seconds`; the workers share the clients. */
const round = async (workers, target, clients, seconds, part, expected) => {
  const servers = target.servers ?? [target]
  const cpuOf = () => servers.reduce((n, server) => n + cpuMicros(server.pid), 0)
  const prefixes = servers.map((server) => `${server.url}/deployments/${deployment}/messaging/conversations`)
  const cpuBefore = cpuOf()
  const answers = await workers.all(
    {
      cmd: "flow",
      prefix: prefixes.length === 1 ? prefixes[0] : prefixes,
      token,
      seconds,
      content,
      expected,
      flowTimeoutMs: 10_000,
      part
    },
    (seconds + 60) * 1000,
    (i) => ({ clients: Math.floor(clients / workers.count) + (i < clients % workers.count ? 1 : 0) })
  )
  const cpu = cpuOf() - cpuBefore
  const sum = (key) => answers.reduce((n, a) => n + a[key], 0)
  const first = answers.flatMap((a) => Array.from(a.first))
  const done = answers.flatMap((a) => Array.from(a.done))
  const completed = sum("completed")
  const elapsed = Math.max(...answers.map((a) => a.seconds))
  return {
    completed,
    unfinished: sum("wrong") + sum("failed") + sum("timeouts") + sum("errors"),
    errorSamples: [...new Set(answers.flatMap((a) => a.errorSamples))],
    perSecond: completed / elapsed,
    cpuPerFlowUs: completed > 0 ? cpu / completed : NaN,
    // Of the load CPUs: a busy client process measures itself, not the server.
    clientBusy: sum("cpuUs") / (elapsed * 1e6 * workers.count),
    firstP50: percentile(first, 50),
    firstP99: percentile(first, 99),
    doneP50: percentile(done, 50),
    doneP99: percentile(done, 99)
  }
}

const summarize = (list) => ({
  perSecond: median(list.map((r) => r.perSecond)),
  cpuPerFlowUs: median(list.map((r) => r.cpuPerFlowUs)),
  firstP50: median(list.map((r) => r.firstP50)),
  firstP99: median(list.map((r) => r.firstP99)),
  doneP50: median(list.map((r) => r.doneP50)),
  doneP99: median(list.map((r) => r.doneP99)),
  completed: list.reduce((n, r) => n + r.completed, 0),
  unfinished: list.reduce((n, r) => n + r.unfinished, 0)
})

export default {
  name: "flow",
  title: "chat flow: send to a new conversation, read its reply stream to the end (echo, delay 0)",
  needs: ["better-sqlite3"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const postgres = scale.flowDatabase === "postgres"
    const agent = scale.flowAgent === "http" ? await startAgent(ctx) : undefined
    const agentEnv = agent === undefined ? {} : { HOSTING_AGENT_RUNTIME: "http" }
    let env = agentEnv
    const fixtures = writeFixtures(dir, agent === undefined ? {} : { endpoint: agent.url, model: "bench" })
    /** The reply's text: the message echoed, or the bench agent's one chunk. */
    const expected = agent === undefined ? content : "ok"
    /** On Postgres: two processes on a database of their own, requests split between them in turn. */
    let pair
    if (postgres) {
      const database = createDatabase("flow")
      ctx.cleanup(database.drop)
      ctx.log(`example server on Postgres: database ${database.name} on ${postgresServer} (dropped after the run)`)
      env = { ...agentEnv, HOSTING_DATABASE_URL: database.url }
      const shared = createDatabase("flow_pair")
      ctx.cleanup(shared.drop)
      ctx.log(`two example servers on Postgres: database ${shared.name}`)
      const servers = []
      for (const name of ["example-a", "example-b"]) {
        servers.push(await startExample(ctx, { dir, fixtures, name, database: `${name}.db`, env: { ...agentEnv, HOSTING_DATABASE_URL: shared.url } }))
      }
      pair = { name: "example x2", servers }
    }
    const example = await startExample(ctx, { dir, fixtures, env })
    // --against: another build of the server, on its own database (a fresh one of its own on Postgres), loaded in turn with this one.
    const against = []
    if (ctx.against !== undefined) {
      let againstEnv = agentEnv
      if (postgres) {
        const database = createDatabase("flow_against")
        ctx.cleanup(database.drop)
        againstEnv = { ...agentEnv, HOSTING_DATABASE_URL: database.url }
      }
      against.push(await startExample(ctx, { dir, fixtures, name: "against", main: ctx.against, database: "against.db", env: againstEnv }))
    }
    // Bare meets the bench agent with Node's own client on kept-alive connections, as the example server's runtime does.
    const bare = await startBaseline(ctx, "bare", agent === undefined
      ? { dir, seed: writeBaselineSeed(dir) }
      : { dir, seed: writeBaselineSeed(dir, { endpoint: agent.url }), env: { BASELINE_AGENT: "relay" } })
    const targets = [example, ...against, ...(pair === undefined ? [] : [pair]), bare]
    const workers = await startWorkers(`${benchDir}/load/flow-client.mjs`, scale.flowWorkers, ctx.scope)
    // --set flowAgainst=together: this build and the --against one are loaded at the same time, each by client
    // processes of its own with as many clients as a round gives one target, so that a machine whose speed drifts
    // drifts for both alike and the ratio of their CPU a message holds round by round (bare is loaded alone).
    const together = scale.flowAgainst === "together" && against.length > 0
    const partnerWorkers = together ? await startWorkers(`${benchDir}/load/flow-client.mjs`, scale.flowWorkers, ctx.scope) : undefined
    /** The units a round loads in turn: each target alone, or this build with the --against one. */
    const units = together ? [[example, against[0]], ...targets.filter((t) => t !== example && t !== against[0]).map((t) => [t])] : targets.map((t) => [t])
    const runUnit = (unit, clients, seconds) =>
      Promise.all(unit.map((target, i) => round(i === 0 ? workers : partnerWorkers, target, clients, seconds, part, expected)))
    const sideBySide = []
    const levels = [scale.flowClients, scale.flowClientsHigh]
    // A warm-up of its own length (flowWarmupS) per target and count: the example server's JIT goes on tiering up its code
    // for about 15 s of flows (three 5 s rounds after a 3 s warm-up took 4,186, 3,168 and 2,501 µs a message),
    // while bare's settles within one round. Bare is warmed as long.
    const warmupS = scale.flowWarmupS
    const part = scale.flowPart
    const rounds = {}
    for (const clients of levels) {
      for (const unit of units) {
        ctx.log(`warm-up ${unit.map((t) => t.name).join(" with ")}, ${clients} clients (${warmupS} s)`)
        await runUnit(unit, clients, warmupS)
      }
      for (const target of targets) rounds[`${target.name}@${clients}`] = []
      for (let r = 1; r <= scale.flowRounds; r++) {
        for (const unit of inTurn(units, r)) {
          const results = await runUnit(unit, clients, scale.flowS)
          unit.forEach((target, i) => {
            const result = results[i]
            rounds[`${target.name}@${clients}`].push(result)
            ctx.log(`round ${r} ${target.name}${unit.length > 1 ? ` (with ${unit[1 - i].name})` : ""}, ${clients} clients: ` +
              `${fmt(result.perSecond)} msgs/s, ` +
              `${fmt(result.cpuPerFlowUs)} µs of server CPU per message, first chunk p50 ${fmt(result.firstP50, 1)} ms, ` +
              `done p50/p99 ${fmt(result.doneP50, 1)}/${fmt(result.doneP99, 1)} ms, ` +
              `client processes ${fmt(result.clientBusy * 100)}% busy` +
              (result.unfinished ? `; ${fmt(result.unfinished)} flows unfinished: ${result.errorSamples.join("; ")}` : ""))
          })
          if (unit.length > 1) {
            const q = results[0].cpuPerFlowUs / results[1].cpuPerFlowUs
            sideBySide.push(q)
            ctx.log(`round ${r}: example's CPU a message ${fmt(q, 3)}x against's, loaded together`)
          }
        }
      }
    }
    await workers.stop()
    await partnerWorkers?.stop()
    const s = Object.fromEntries(Object.entries(rounds).map(([key, list]) => [key, summarize(list)]))
    const [low, high] = levels
    const e = s[`example@${low}`]
    const examples = targets.filter((target) => target !== bare)
    const sumOver = (key) =>
      levels.reduce((n, clients) => n + examples.reduce((m, target) => m + s[`${target.name}@${clients}`][key], 0), 0)
    const unfinished = sumOver("unfinished")
    const completed = sumOver("completed")
    const db = postgres ? "Postgres" : "SQLite"
    const two = postgres ? s[`example x2@${low}`] : undefined
    const goals = part !== "whole" || agent !== undefined
      ? []
      : postgres
      ? [
        goal(`msgs/s on Postgres at ${low} clients`, fmt(e.perSecond), ">= 400", e.perSecond >= 400),
        goal(`done p99 on Postgres at ${low} clients`, `${fmt(e.doneP99, 1)} ms`, "<= 100 ms", e.doneP99 <= 100),
        goal(`two processes vs one at ${low} clients`, ratio(two.perSecond, e.perSecond), "> 1x", two.perSecond > e.perSecond)
      ]
      : [
        goal(`msgs/s on SQLite at ${low} clients`, fmt(e.perSecond), ">= 1,500", e.perSecond >= 1500),
        goal(`server CPU per message at ${low} clients`, `${fmt(e.cpuPerFlowUs / 1000, 2)} ms`, "<= 0.6 ms",
          e.cpuPerFlowUs <= 600),
        goal(`first chunk p50 at ${low} clients`, `${fmt(e.firstP50, 1)} ms`, "<= 5 ms", e.firstP50 <= 5)
      ]
    return {
      detail: (part === "whole" ? "" : `the ${part} alone (flowPart), the flow's goals not judged; `) +
        (agent === undefined ? "" : "the bench agent behind the http runtime (bare relays it), the flow's goals not judged; ") +
        `example server on ${db}, bare on SQLite; ${low} then ${high} clients in ${scale.flowWorkers} ` +
        `process(es), ${scale.flowRounds} rounds x ${scale.flowS} s per target and count`,
      columns: ["target", "clients", "msgs/s", "CPU µs/msg", "first chunk p50 ms", "first chunk p99 ms", "done p50 ms",
        "done p99 ms", "unfinished", "msgs/s vs bare"],
      rows: levels.flatMap((clients) =>
        targets.map(({ name }) => {
          const r = s[`${name}@${clients}`]
          return [
            name.startsWith("example") ? `${name} (${db})` : name, fmt(clients), fmt(r.perSecond), fmt(r.cpuPerFlowUs),
            fmt(r.firstP50, 1), fmt(r.firstP99, 1), fmt(r.doneP50, 1), fmt(r.doneP99, 1), fmt(r.unfinished),
            ratio(r.perSecond, s[`bare@${clients}`].perSecond)
          ]
        })
      ),
      goals: [
        ...goals,
        goal(part === "send" ? "every send answered 2xx" : `every flow completed with the ${agent === undefined ? "echoed" : "agent's"} text`, `${fmt(completed)}/${fmt(completed + unfinished)}`, "all",
          completed > 0 && unfinished === 0)
      ],
      notes: [
        ...(postgres
          ? [
            "CPU µs/msg counts the example servers' processes only, not Postgres's",
            "example x2: two processes on one database, each request (a send, a stream) to the next in turn; both run on the servers' CPUs"
          ]
          : []),
        ...(sideBySide.length > 0
          ? [
            `example and against loaded together (flowAgainst=together), each with the round's clients: example's CPU a ` +
            `message over against's, round by round: median ${fmt(median(sideBySide), 3)}x, from ${fmt(Math.min(...sideBySide), 3)}x ` +
            `to ${fmt(Math.max(...sideBySide), 3)}x over ${sideBySide.length} rounds`
          ]
          : [])
      ],
      raw: { database: db, rounds }
    }
  }
}
