// Server start: the time from spawning `node` to the listening line, and the
// RSS once idle a second later. A first start per target creates and
// migrates the database and is not counted, so the rounds are restarts on a
// warm build, a warm page cache and an existing database.
import { rss } from "../lib/proc.mjs"
import { startBaseline, startExample, writeBaselineSeed, writeFixtures } from "../lib/targets.mjs"
import { fmt, goal, mb, median, ratio, sleep } from "../lib/util.mjs"

export default {
  name: "start",
  title: "server start: ready time and idle RSS",
  needs: ["better-sqlite3"],
  async run(ctx) {
    const { scale } = ctx
    const dir = ctx.dir()
    const fixtures = writeFixtures(dir)
    const seed = writeBaselineSeed(dir)
    const targets = [
      { name: "example", start: () => startExample(ctx, { dir, fixtures }) },
      { name: "bare", start: () => startBaseline(ctx, "bare", { dir, seed }) }
    ]
    const once = async (target) => {
      const server = await target.start()
      await sleep(1000)
      const idle = rss(server.pid)
      await server.stop()
      return { ms: server.startMs, rss: idle }
    }
    for (const target of targets) {
      ctx.log(`warm-up ${target.name}`)
      await once(target)
    }
    const rounds = Object.fromEntries(targets.map((t) => [t.name, []]))
    for (let r = 1; r <= scale.startRounds; r++) {
      for (const target of targets) {
        const result = await once(target)
        rounds[target.name].push(result)
        ctx.log(`round ${r} ${target.name}: ready in ${fmt(result.ms)} ms, idle RSS ${mb(result.rss)} MB`)
      }
    }
    const s = Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, {
      ms: median(list.map((r) => r.ms)),
      maxMs: Math.max(...list.map((r) => r.ms)),
      rss: median(list.map((r) => r.rss))
    }]))
    const e = s.example
    return {
      detail: `${scale.startRounds} restarts per target on an existing database, idle RSS read 1 s after ready`,
      columns: ["target", "ready ms", "max ready ms", "idle RSS MB", "ready vs bare"],
      rows: targets.map(({ name }) => [name, fmt(s[name].ms), fmt(s[name].maxMs), mb(s[name].rss), ratio(s[name].ms, s.bare.ms)]),
      goals: [
        goal("ready (listening line) after node starts", `${fmt(e.ms)} ms`, "<= 1,500 ms", ctx.mode === "source" ? null : e.ms <= 1500),
        goal("idle RSS", `${mb(e.rss)} MB`, "<= 120 MB", ctx.mode === "source" ? null : e.rss <= 120 * 1024 * 1024)
      ],
      notes: ctx.mode === "source" ? ["the example server ran from sources through tsx: not a build, goals not judged"] : [],
      raw: rounds
    }
  }
}
