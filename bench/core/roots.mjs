#!/usr/bin/env node
// Effect's register of root fibers, as effect leaves it and renewed
// (`InFlight.renewFiberRoots`), in a process that has aged as a server's
// has by the time it serves: a few long-lived daemons, and young
// collections meanwhile. Then clients fork daemons and await them (as
// requests and replies are), and each run prints steps a second and the
// young collector's time a step. Each
// register is measured in a process of its own, the plain one first; the
// ratio is the renewed one's against it. Not a goal workload.
// docs/performance.md, "Registries that promote what they hold".
//
//   node bench/core/roots.mjs [--clients 10] [--seconds 4]
//
// Needs the build (`pnpm run build`).
import { InFlight } from "@hosting/core"
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { measureInChild, runClients, watchYoungCollections } from "./measure.mjs"

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "10" },
    seconds: { type: "string", default: "4" },
    register: { type: "string" }
  }
})

/** One run, in this process: ages the process, then measures the clients' steps. */
const measure = async (renewed) => {
  if (renewed) InFlight.renewFiberRoots()
  // Long-lived daemons, as a server has, then young collections while they run: the register's table ages.
  for (let i = 0; i < 3; i++) Effect.runFork(Effect.never)
  let garbage = 0
  for (let i = 0; i < 400_000; i++) garbage += Array.from({ length: 16 }, (_, j) => ({ j })).length
  const young = watchYoungCollections()
  const work = () => Array.from({ length: 64 }, (_, i) => ({ i }))
  const step = Effect.flatMap(Effect.forkDaemon(Effect.zipRight(Effect.yieldNow(), Effect.sync(work))), (fiber) => fiber.await)
  const clients = Number(values.clients)
  await runClients(step, clients, 1000)
  const from = performance.now()
  const start = Date.now()
  const steps = await runClients(step, clients, Number(values.seconds) * 1000)
  const elapsed = Date.now() - start
  const youngMs = await young.stop(from, performance.now())
  return { garbage, perSecond: Math.round(steps / elapsed * 1000), youngUs: youngMs * 1000 / steps }
}

if (values.register !== undefined) {
  const result = await measure(values.register === "renewed")
  process.send(result, () => process.exit(0))
} else {
  // Allocation-site pretenuring off: it promotes fibers by a path of its own, which would hide this one.
  const runIn = (register) =>
    measureInChild(new URL(import.meta.url), ["--register", register, "--clients", values.clients, "--seconds", values.seconds], [
      "--no-allocation-site-pretenuring"
    ])
  const plain = await runIn("plain")
  const renewed = await runIn("renewed")
  console.log(`effect's root fibers, ${values.clients} clients forking daemons, ${values.seconds} s each, after the process aged`)
  console.log("register  steps/s  young GC µs a step")
  for (const [name, row] of [["plain", plain], ["renewed", renewed]]) {
    console.log(`${name.padEnd(8)} ${String(row.perSecond).padStart(8)}  ${row.youngUs.toFixed(2).padStart(18)}`)
  }
  console.log(`renewed vs plain: ${(renewed.perSecond / plain.perSecond).toFixed(2)}x steps/s`)
}
