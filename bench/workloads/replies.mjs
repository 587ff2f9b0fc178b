// The reply stream: many conversations streaming replies at once. The
// server's agent runtime is `http`, pointed at the bench agent
// (load/agent.mjs), whose chunks carry the time they were written; the
// clients subtract it from the time each chunk reaches them. Per round every
// conversation first gets a short reply with its stream open (so the measured
// reply is live, not a catch-up), then all send at once and the stamped
// replies are timed.
//
// The goal is judged on the chunks written once every send of the round was
// answered: from then on every conversation is streaming and nothing else is
// served. Before that the sends arrive as one burst (1,000 at once), and a
// chunk waits behind the sends in the same turn of the event loop; that p99
// is shown beside it. The `relay` baseline (bare's server with Node's own
// client on kept-alive connections, the reply stored only at its end) shows
// what node:http itself costs per chunk.
import { randomUUID } from "node:crypto"
import { cpuMicros, sampleRss, startWorkers } from "../lib/proc.mjs"
import { benchDir, deployment, startAgent, startBaseline, startExample, token, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, inTurn, mb, median, percentile, ratio } from "../lib/util.mjs"

const split = (items, count, i) => items.filter((_, j) => j % count === i)

/** One round on `target` with `count` conversations. */
const round = async (ctx, workers, target, count) => {
  const { scale } = ctx
  const ids = Array.from({ length: count }, () => randomUUID())
  const prefix = `${target.url}/deployments/${deployment}/messaging/conversations`
  const opened = await workers.all(
    { cmd: "replies-open", prefix, token, warm: "warm up", concurrency: 20, timeoutMs: 120_000 },
    150_000,
    (i) => ({ ids: split(ids, workers.count, i) })
  )
  const memory = sampleRss(target.pid, 100)
  const cpuBefore = cpuMicros(target.pid)
  const streamMs = scale.chunks * scale.intervalMs
  const answers = await workers.all(
    { cmd: "replies-go", prefix, token, content: `measure chunks=${scale.chunks} interval=${scale.intervalMs}`,
      concurrency: 50, timeoutMs: streamMs + 60_000 },
    streamMs + 90_000
  )
  const rss = memory.stop().max
  // The server's CPU over the sends and the streaming of their replies, per chunk delivered.
  const cpu = cpuMicros(target.pid) - cpuBefore
  await workers.all({ cmd: "close" }, 30_000)
  const latencies = answers.flatMap((a) => Array.from(a.latencies))
  // Chunks the agent wrote once every client had its sends answered: the replies streaming, no send competing.
  const allAnswered = Math.max(...answers.map((a) => a.sendsAnswered ?? Infinity))
  const streaming = answers.flatMap((a) => Array.from(a.latencies).filter((_, i) => a.written[i] >= allAnswered))
  const sum = (list, key) => list.reduce((n, a) => n + a[key], 0)
  return {
    conversations: sum(opened, "opened"),
    openErrors: [...new Set(opened.flatMap((a) => a.errors))],
    completed: sum(answers, "completed"),
    failed: sum(answers, "failed"),
    sendErrors: sum(answers, "sendErrors"),
    sendErrorSamples: [...new Set(answers.flatMap((a) => a.errors))],
    chunks: sum(answers, "chunks"),
    expectedChunks: sum(opened, "opened") * scale.chunks,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    streamingChunks: streaming.length,
    p99Streaming: streaming.length > 0 ? percentile(streaming, 99) : NaN,
    cpuPerChunk: cpu / Math.max(1, sum(answers, "chunks")),
    rss
  }
}

export default {
  name: "replies",
  title: "reply stream: concurrent conversations, chunk-to-client latency",
  needs: ["better-sqlite3"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const agent = await startAgent(ctx)
    const example = await startExample(ctx, {
      dir,
      fixtures: writeFixtures(dir, { endpoint: agent.url, model: "bench" }),
      env: { HOSTING_AGENT_RUNTIME: "http" }
    })
    // --against: another build of the server, on its own database, streamed in turn with this one.
    const against = ctx.against === undefined ? [] : [await startExample(ctx, {
      dir,
      fixtures: writeFixtures(dir, { endpoint: agent.url, model: "bench" }),
      env: { HOSTING_AGENT_RUNTIME: "http" },
      name: "against",
      main: ctx.against,
      database: "against.db"
    })]
    const bare = await startBaseline(ctx, "bare", {
      dir,
      seed: writeBaselineSeed(dir, { endpoint: agent.url }),
      env: { BASELINE_AGENT: "http" }
    })
    const relay = await startBaseline(ctx, "bare", {
      dir,
      name: "relay",
      seed: writeBaselineSeed(dir, { endpoint: agent.url }),
      env: { BASELINE_AGENT: "relay" }
    })
    const targets = [example, ...against, bare, relay]
    const workers = await startWorkers(`${benchDir}/load/sse-client.mjs`, scale.sseWorkers, ctx.scope)
    for (const target of targets) {
      ctx.log(`warm-up ${target.name}`)
      await round(ctx, workers, target, Math.min(scale.conversations, 20))
    }
    const rounds = Object.fromEntries(targets.map((t) => [t.name, []]))
    for (let r = 1; r <= scale.replyRounds; r++) {
      for (const target of inTurn(targets, r)) {
        const result = await round(ctx, workers, target, scale.conversations)
        rounds[target.name].push(result)
        ctx.log(`round ${r} ${target.name}: ${fmt(result.completed)}/${fmt(result.conversations)} replies complete, ` +
          `${fmt(result.chunks)}/${fmt(result.expectedChunks)} chunks, p99 ${fmt(result.p99Streaming, 1)} ms over the ` +
          `${fmt(result.streamingChunks)} written after every send was answered (${fmt(result.p99, 1)} ms over all), ` +
          `${fmt(result.cpuPerChunk, 0)} µs of server CPU per chunk` +
          (result.openErrors.length ? `; errors opening: ${result.openErrors.join("; ")}` : "") +
          (result.sendErrors ? `; ${fmt(result.sendErrors)} sends failed: ${result.sendErrorSamples.join("; ")}` : ""))
      }
    }
    await workers.stop()
    const s = Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, {
      conversations: Math.min(...list.map((r) => r.conversations)),
      completed: list.reduce((n, r) => n + r.completed, 0),
      total: list.reduce((n, r) => n + r.conversations, 0),
      chunks: list.reduce((n, r) => n + r.chunks, 0),
      expectedChunks: list.reduce((n, r) => n + r.expectedChunks, 0),
      p50: median(list.map((r) => r.p50)),
      p99: median(list.map((r) => r.p99)),
      p99Streaming: median(list.map((r) => r.p99Streaming)),
      cpuPerChunk: median(list.map((r) => r.cpuPerChunk)),
      max: Math.max(...list.map((r) => r.max)),
      rss: Math.max(...list.map((r) => r.rss))
    }]))
    const e = s.example
    return {
      detail: `${fmt(scale.conversations)} conversations, replies of ${scale.chunks} chunks ${scale.intervalMs} ms apart ` +
        `from the bench agent, ${scale.sseWorkers} client processes, ${scale.replyRounds} rounds`,
      columns: ["target", "conversations", "replies complete", "chunks", "p50 ms", "p99 streaming ms",
        "p99 with the sends ms", "max ms", "CPU µs/chunk", "max RSS MB", "p99 streaming vs bare"],
      rows: targets.map(({ name }) => [
        name, fmt(s[name].conversations), `${fmt(s[name].completed)}/${fmt(s[name].total)}`,
        `${fmt(s[name].chunks)}/${fmt(s[name].expectedChunks)}`, fmt(s[name].p50, 1), fmt(s[name].p99Streaming, 1),
        fmt(s[name].p99, 1), fmt(s[name].max, 1), fmt(s[name].cpuPerChunk, 0), mb(s[name].rss),
        ratio(s[name].p99Streaming, s.bare.p99Streaming)
      ]),
      goals: [
        goal("concurrent conversations streaming", fmt(e.conversations), ">= 1,000", e.conversations >= 1000),
        goal("chunk-to-client p99, every conversation streaming", `${fmt(e.p99Streaming, 1)} ms`, "<= 50 ms",
          e.p99Streaming <= 50),
        goal("every reply complete, every chunk delivered",
          `${fmt(e.completed)}/${fmt(e.total)}, ${fmt(e.chunks)}/${fmt(e.expectedChunks)}`, "all",
          e.completed === e.total && e.chunks === e.expectedChunks)
      ],
      notes: [
        "latency = client arrival - the time the bench agent wrote the chunk (both wall clock, one machine)",
        "p99 streaming: the chunks written once every send of the round was answered (every reply streaming, no send " +
        "being served), on which the goal is judged; p99 with the sends: every chunk, the burst of 1,000 sends included",
        "relay: bare's server with Node's own client on kept-alive connections, each reply stored once at its end: " +
        "what node:http costs per chunk with the least around it",
        "CPU µs/chunk: the server's CPU time from the sends to the last reply's end, over the chunks delivered (sends and " +
        "replies included)"
      ],
      raw: rounds
    }
  }
}
