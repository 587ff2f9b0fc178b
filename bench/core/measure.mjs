// What the core's micro-benchmarks share: concurrent clients that repeat a
// step, the young collections of a run, and a run in a process of its own.
import { Effect } from "effect"
import { fork } from "node:child_process"
import { PerformanceObserver } from "node:perf_hooks"

/** Runs `step` in a loop from `clients` fibers for `ms`; resolves with the steps done. */
export const runClients = (step, clients, ms) =>
  Effect.runPromise(Effect.suspend(() => {
    const until = Date.now() + ms
    let count = 0
    const client = Effect.whileLoop({ while: () => Date.now() < until, body: () => step, step: () => void count++ })
    return Effect.map(Effect.all(Array.from({ length: clients }, () => client), { concurrency: "unbounded", discard: true }), () => count)
  }))

/**
 * Notes young collections from now on; `stop(from, to)` ends the watch and
 * resolves with the milliseconds of those that started between `from` and
 * `to` (`performance.now()` times), once their entries have arrived.
 */
export const watchYoungCollections = () => {
  const youngs = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (entry.detail?.kind === 1) youngs.push(entry)
  })
  observer.observe({ entryTypes: ["gc"] })
  return {
    stop: async (from, to) => {
      await new Promise((resolve) => setTimeout(resolve, 50))
      observer.disconnect()
      return youngs.filter((entry) => entry.startTime >= from && entry.startTime < to).reduce((sum, entry) => sum + entry.duration, 0)
    }
  }
}

/**
 * Runs the script at `url` again in a process of its own with `args` (and
 * Node's `execArgv`); resolves with the one message it sends back.
 */
export const measureInChild = (url, args, execArgv = []) =>
  new Promise((resolve, reject) => {
    const child = fork(url, args, { execArgv })
    child.once("message", resolve)
    child.once("exit", (code) => code !== 0 && reject(new Error(`${args.join(" ")}: exited with ${code}`)))
  })
