#!/usr/bin/env node
// A full cache taking new keys: a native `Map` that drops its first key
// before each new one (as the caches did), and `Recent.make(max)` of
// `@hosting/core`, which every cache uses now. For each size, both are
// filled, then take `--keys` new keys, a read of a recent key every third;
// the line prints µs a new key and the ratio of Recent's to the Map's,
// measured in the same run. Not a goal workload. docs/decisions.md, "A
// bounded map that drops its oldest entry in constant time".
//
//   node bench/core/caches.mjs [--keys 200000] [--sizes 1000,10000,100000]
//
// Needs the build (`pnpm run build`).
import { Recent } from "@hosting/core"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    keys: { type: "string", default: "200000" },
    sizes: { type: "string", default: "1000,10000,100000" }
  }
})
const keys = Number(values.keys)
const sizes = values.sizes.split(",").map(Number)

/** A native Map that drops its first key when full, as the caches did. */
const dropFirst = (max) => {
  const map = new Map()
  return {
    get: (key) => map.get(key),
    set: (key, value) => {
      if (!map.delete(key) && map.size >= max) map.delete(map.keys().next().value)
      map.set(key, value)
    }
  }
}

/** µs a new key for a full cache of `max` made by `make`. */
const measure = (make, max) => {
  const cache = make(max)
  for (let i = 0; i < max; i++) cache.set(`key-${i}`, i)
  let next = max
  let found = 0
  const started = performance.now()
  for (let i = 0; i < keys; i++) {
    cache.set(`key-${next++}`, i)
    if (i % 3 === 0 && cache.get(`key-${next - 7}`) !== undefined) found++
  }
  const elapsed = performance.now() - started
  if (found === 0) throw new Error("no recent key was found: the cache dropped what it just took")
  return (elapsed * 1000) / keys
}

for (const max of sizes) {
  // Each measured twice, the first a warm-up of the code paths.
  measure(dropFirst, Math.min(max, 1000))
  measure(Recent.make, Math.min(max, 1000))
  const map = measure(dropFirst, max)
  const recent = measure(Recent.make, max)
  console.log(
    `${max.toLocaleString("en")} entries: Map dropping its first key ${map.toFixed(2)} µs a new key, ` +
      `Recent ${recent.toFixed(2)} µs (${(recent / map).toFixed(3)}x)`
  )
}
