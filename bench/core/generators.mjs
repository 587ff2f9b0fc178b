#!/usr/bin/env node
// A use case written as `(args) => Effect.gen(function*() {...})` makes a
// new generator function at every call; one written with
// `Effect.fnUntraced(function*(args) {...})` makes it once. Calling a new
// generator function makes V8 give it a map and a prototype of its own, in
// the old generation, and the map points back at the function, so the
// function's closure (the call's arguments, and all they reach) is kept
// until the next full collection: every young collection promotes it.
// Clients run a step of each kind (a request's objects held across a
// `yieldNow`); each kind runs in a process of its own, and prints steps a
// second, bytes promoted a step and young collection a step. Not a goal
// workload. docs/decisions.md, "Generator functions made once".
//
//   node bench/core/generators.mjs [--clients 10] [--seconds 4]
import { Effect } from "effect"
import { parseArgs } from "node:util"
import { getHeapSpaceStatistics } from "node:v8"
import { measureInChild, runClients, watchYoungCollections } from "./measure.mjs"

const { values } = parseArgs({
  options: {
    clients: { type: "string", default: "10" },
    seconds: { type: "string", default: "4" },
    kind: { type: "string" }
  }
})

/** What a request holds while it waits: a few objects of its own. */
const requestObjects = (n) => ({ id: `request-${n}`, rows: Array.from({ length: 32 }, (_, i) => ({ i, n })) })

/** A new generator function at each call, as `(args) => Effect.gen(...)` makes. */
const perCall = (request) =>
  Effect.gen(function*() {
    yield* Effect.yieldNow()
    return request.rows.length
  })

/** One generator function for every call. */
const once = Effect.fnUntraced(function*(request) {
  yield* Effect.yieldNow()
  return request.rows.length
})

const oldSpace = () => getHeapSpaceStatistics().find((space) => space.space_name === "old_space").space_used_size

/** One run, in this process. */
const measure = async (kind) => {
  const useCase = kind === "per call" ? perCall : once
  const young = watchYoungCollections()
  let n = 0
  const step = Effect.suspend(() => useCase(requestObjects(n++)))
  const clients = Number(values.clients)
  await runClients(step, clients, 1000)
  // The old generation's growth over the run, full collections aside: what the young collections promoted.
  let promoted = 0
  let before = oldSpace()
  const sampler = setInterval(() => {
    const now = oldSpace()
    if (now > before) promoted += now - before
    before = now
  }, 5)
  const from = performance.now()
  const start = Date.now()
  const steps = await runClients(step, clients, Number(values.seconds) * 1000)
  const elapsed = Date.now() - start
  clearInterval(sampler)
  const youngMs = await young.stop(from, performance.now())
  return { perSecond: Math.round(steps / elapsed * 1000), promotedBytes: promoted / steps, youngUs: youngMs * 1000 / steps }
}

if (values.kind !== undefined) {
  const result = await measure(values.kind)
  process.send(result, () => process.exit(0))
} else {
  const runIn = (kind) => measureInChild(new URL(import.meta.url), ["--kind", kind, "--clients", values.clients, "--seconds", values.seconds])
  const perCallRow = await runIn("per call")
  const onceRow = await runIn("once")
  console.log(`a use case's generator function, ${values.clients} clients, ${values.seconds} s each`)
  console.log("made      steps/s  bytes promoted a step  young GC µs a step")
  for (const [name, row] of [["per call", perCallRow], ["once", onceRow]]) {
    console.log(
      `${name.padEnd(8)} ${String(row.perSecond).padStart(8)}  ${row.promotedBytes.toFixed(0).padStart(21)}  ${row.youngUs.toFixed(2).padStart(18)}`
    )
  }
  console.log(`once vs per call: ${(onceRow.perSecond / perCallRow.perSecond).toFixed(2)}x steps/s`)
}
