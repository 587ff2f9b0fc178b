// The account event stream: many subscribers on one process, spread over
// several client processes. Per round: connect them all (each until its
// `ready`), read the server's RSS, register builds and time each
// `agent.build` until every subscriber has it, then disconnect. Extra
// connect/disconnect cycles follow; the server's open file descriptors once
// idle again, and its RSS while connected, show whether churn leaks.
import { fdCount, rss, startWorkers, waitUntil } from "../lib/proc.mjs"
import { apiOk, benchDir, startBaseline, startExample, token, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, max, mb, median, now, percentile, ratio, sleep, slope } from "../lib/util.mjs"

/** How many of `total` subscribers worker `i` of `count` opens. */
const share = (total, count, i) => Math.floor(total / count) + (i < total % count ? 1 : 0)

/** Connects `count` subscribers; resolves with how many got `ready` and how long that took. */
const connect = async (workers, target, count) => {
  const started = now()
  const answers = await workers.all(
    { cmd: "events-connect", url: `${target.url}/accounts/acme/events`, token, concurrency: 50, timeoutMs: 120_000 },
    150_000,
    (i) => ({ count: share(count, workers.count, i) })
  )
  return {
    connected: answers.reduce((n, a) => n + a.connected, 0),
    errors: [...new Set(answers.flatMap((a) => a.errors))],
    seconds: (now() - started) / 1000
  }
}

/** Registers a build and times its agent.build event until every open subscriber has it. */
const deliver = async (workers, target, key) => {
  const sent = now()
  await apiOk(target.url, "POST", "/agents/acme/bench-events/register", {
    body: { build_id: key, registry: "ghcr.io/acme", spec_content: "name: bench-events\ndescription: Events\n" }
  })
  const answers = await workers.all({ cmd: "events-await", key, timeoutMs: 15_000 }, 30_000)
  const latencies = answers.flatMap((a) => Array.from(a.arrivals, (t) => t - sent))
  return {
    expected: answers.reduce((n, a) => n + a.expected, 0),
    received: answers.reduce((n, a) => n + a.received, 0),
    duplicates: answers.reduce((n, a) => n + a.duplicates, 0),
    allMs: max(latencies),
    p99: percentile(latencies, 99)
  }
}

/** Closes every subscriber; resolves with the server's open descriptors once they are released (or 5 s). */
const disconnect = async (workers, target, idleFds) => {
  await workers.all({ cmd: "close" }, 30_000)
  await waitUntil(() => fdCount(target.pid) <= idleFds, 5_000, 50)
  return fdCount(target.pid)
}

export default {
  name: "events",
  title: "account event stream: subscribers, fan-out, memory, churn",
  needs: ["better-sqlite3"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const n = scale.subscribers
    const example = await startExample(ctx, { dir, fixtures: writeFixtures(dir) })
    const bare = await startBaseline(ctx, "bare", { dir, seed: writeBaselineSeed(dir) })
    const targets = [example, bare]
    const workers = await startWorkers(`${benchDir}/load/sse-client.mjs`, scale.sseWorkers, ctx.scope)
    const stats = Object.fromEntries(targets.map((t) => [t.name, { rounds: [], cycles: [], idleFds: NaN }]))
    let key = 0

    for (const target of targets) {
      const warm = Math.min(n, 100)
      ctx.log(`warm-up ${target.name} (${warm} subscribers)`)
      const fds = fdCount(target.pid)
      await connect(workers, target, warm)
      await deliver(workers, target, `warm-${target.name}`)
      await disconnect(workers, target, fds)
      await sleep(200)
      stats[target.name].idleFds = fdCount(target.pid)
      stats[target.name].idleRss = rss(target.pid)
    }

    for (let round = 1; round <= scale.eventRounds; round++) {
      for (const target of targets) {
        const idleFds = fdCount(target.pid)
        // Idle as after the warm-up: a heap that grew in an earlier round and was kept would hide the streams' cost.
        const idleRss = stats[target.name].idleRss
        const c = await connect(workers, target, n)
        await sleep(500)
        const connectedRss = rss(target.pid)
        const deliveries = []
        for (let e = 0; e < scale.eventsPerRound; e++) {
          deliveries.push(await deliver(workers, target, `b-${++key}`))
          await sleep(100)
        }
        const fdsAfter = await disconnect(workers, target, idleFds)
        const result = {
          ...c,
          idleRss,
          connectedRss,
          perConnection: (connectedRss - idleRss) / Math.max(1, c.connected),
          allMs: median(deliveries.map((d) => d.allMs)),
          p99: median(deliveries.map((d) => d.p99)),
          received: deliveries.reduce((s, d) => s + d.received, 0),
          expected: deliveries.reduce((s, d) => s + d.expected, 0),
          duplicates: deliveries.reduce((s, d) => s + d.duplicates, 0),
          fdsAfter
        }
        stats[target.name].rounds.push(result)
        ctx.log(`round ${round} ${target.name}: ${fmt(c.connected)} connected in ${c.seconds.toFixed(1)} s, ` +
          `all delivered in ${fmt(result.allMs, 1)} ms, ${fmt(result.perConnection / 1024, 1)} KB/connection` +
          (c.errors.length ? `; errors: ${c.errors.join("; ")}` : ""))
      }
    }

    for (let cycle = 1; cycle <= scale.churnCycles; cycle++) {
      for (const target of targets) {
        const c = await connect(workers, target, n)
        await sleep(300)
        const connectedRss = rss(target.pid)
        const fds = await disconnect(workers, target, stats[target.name].idleFds)
        stats[target.name].cycles.push({ connected: c.connected, connectedRss, fds })
      }
    }
    await workers.stop()

    const s = Object.fromEntries(targets.map(({ name }) => {
      const { rounds, cycles, idleFds } = stats[name]
      const connected = [...rounds.map((r) => r.connectedRss), ...cycles.map((c) => c.connectedRss)]
      const lastFds = cycles.at(-1)?.fds ?? rounds.at(-1).fdsAfter
      // RSS growth while connected, per connection per cycle: the trend over every round and cycle (V8's
      // heap grows and shrinks by tens of MB between cycles, so two end points alone say little).
      const growth = slope(connected) / n
      return [name, {
        connected: Math.min(...rounds.map((r) => r.connected)),
        connectS: median(rounds.map((r) => r.seconds)),
        allMs: median(rounds.map((r) => r.allMs)),
        p99: median(rounds.map((r) => r.p99)),
        perConnection: median(rounds.map((r) => r.perConnection)),
        connectedRss: Math.max(...connected),
        received: rounds.reduce((t, r) => t + r.received, 0),
        expected: rounds.reduce((t, r) => t + r.expected, 0),
        duplicates: rounds.reduce((t, r) => t + r.duplicates, 0),
        fdLeak: lastFds - idleFds,
        growth
      }]
    }))
    const e = s.example
    const leakFree = e.fdLeak <= 0 && e.growth < 1024
    return {
      detail: `${fmt(n)} subscribers over ${scale.sseWorkers} client processes, ${scale.eventRounds} rounds x ` +
        `${scale.eventsPerRound} events, then ${scale.churnCycles} connect/disconnect cycles`,
      columns: ["target", "connected", "connect s", "all delivered ms", "p99 ms", "KB/conn", "max RSS MB",
        "delivered", "fd leak", "churn B/conn/cycle", "delivery vs bare"],
      rows: targets.map(({ name }) => [
        name, fmt(s[name].connected), fmt(s[name].connectS, 1), fmt(s[name].allMs, 1), fmt(s[name].p99, 1),
        fmt(s[name].perConnection / 1024, 1), mb(s[name].connectedRss),
        `${fmt(s[name].received)}/${fmt(s[name].expected)}${s[name].duplicates ? ` (+${s[name].duplicates} dup)` : ""}`,
        fmt(s[name].fdLeak), fmt(s[name].growth), ratio(s[name].allMs, s.bare.allMs)
      ]),
      goals: [
        goal("subscribers on one process", fmt(e.connected), ">= 10,000", e.connected >= 10_000),
        goal("one event delivered to all", `${fmt(e.allMs, 1)} ms, ${fmt(e.received)}/${fmt(e.expected)}`, "<= 250 ms",
          e.allMs <= 250 && e.received === e.expected && e.duplicates === 0),
        goal("RSS per connection", `${fmt(e.perConnection / 1024, 1)} KB`, "<= 20 KB", e.perConnection <= 20 * 1024),
        goal("churn leaks nothing (fds back to idle; RSS growth < 1 KB/conn/cycle)",
          `${fmt(e.fdLeak)} fds, ${fmt(e.growth)} B/conn/cycle`, "0 fds, ~0 B", leakFree)
      ],
      notes: ["delivery is timed from the start of the register request to the last subscriber's arrival"],
      raw: stats
    }
  }
}
