// Interleaved autocannon rounds, shared by the HTTP workloads: a warm-up per
// target, then A B C, B C A, C A B ..., each round run by the autocannon process
// while the server's RSS is sampled.
import { cpuMicros, sampleRss } from "./proc.mjs"
import { fmt, inTurn, median } from "./util.mjs"

/**
 * Runs a warm-up per target, then interleaved autocannon rounds (A B C, B C A,
 * C A B ..., `inTurn`); `check(target, accepted)` runs after each, outside the measurement.
 * Resolves with the rounds per target.
 */
export const interleave = async (ctx, load, targets, request, check) => {
  const { scale } = ctx
  const rounds = Object.fromEntries(targets.map((t) => [t.name, []]))
  const run = (target, seconds) =>
    load.all({ cmd: "run", origin: new URL(target.url).origin, connections: scale.connections, seconds, ...request(target) },
      (seconds + 30) * 1000).then(([result]) => result)
  for (const target of targets) {
    ctx.log(`warm-up ${target.name} (${scale.warmupS} s)`)
    await run(target, scale.warmupS)
  }
  for (let round = 1; round <= scale.httpRounds; round++) {
    for (const target of inTurn(targets, round)) {
      const memory = sampleRss(target.pid, 250)
      const cpuBefore = cpuMicros(target.pid)
      const result = await run(target, scale.durationS)
      result.rss = memory.stop().max
      // The server's CPU per answered request: steadier than req/s on a machine whose speed drifts.
      result.cpuPerRequestUs = result.ok > 0 ? (cpuMicros(target.pid) - cpuBefore) / result.ok : NaN
      ctx.log(`round ${round} ${target.name}: ${fmt(result.perSecond)} req/s, p99 ${result.p99} ms, ` +
        `${fmt(result.cpuPerRequestUs)} µs of server CPU per request`)
      if (check) result.check = await check(target, result.accepted)
      delete result.accepted
      rounds[target.name].push(result)
    }
  }
  return rounds
}

/**
 * One more round of each of `targets`, held to `rate` requests a second:
 * what a request costs a server answering at another server's rate. At
 * full speed a slower server's clients wait idle between answers, and on
 * loopback waking them is paid in the server's writes, so the CPU a request
 * of two servers of different speeds is not comparable; at one rate it is.
 * Resolves with the CPU µs a request per target name.
 */
export const pacedCpu = async (ctx, load, targets, request, rate) => {
  const { scale } = ctx
  const paced = {}
  for (const target of targets) {
    const cpuBefore = cpuMicros(target.pid)
    const [result] = await load.all({
      cmd: "run",
      origin: new URL(target.url).origin,
      connections: scale.connections,
      seconds: scale.durationS,
      rate: Math.max(1, Math.round(rate)),
      ...request(target)
    }, (scale.durationS + 30) * 1000)
    paced[target.name] = result.ok > 0 ? (cpuMicros(target.pid) - cpuBefore) / result.ok : NaN
    ctx.log(`paced ${target.name} at ${fmt(rate)} req/s: ${fmt(result.perSecond)} req/s, ` +
      `${fmt(paced[target.name])} µs of server CPU per request`)
  }
  return paced
}

/** The per-target medians of interleaved rounds. */
export const summarize = (rounds) =>
  Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, {
    perSecond: median(list.map((r) => r.perSecond)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
    rss: Math.max(...list.map((r) => r.rss)),
    cpuPerRequestUs: median(list.map((r) => r.cpuPerRequestUs)),
    failures: list.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0)
  }]))
